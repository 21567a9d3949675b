/**
 * The embedded database's autovacuum. PGlite runs PostgreSQL as one backend
 * with no autovacuum launcher, so the space of deleted and updated rows (a
 * turn's marker, a job's lease, a followed turn's chunks, the planner
 * decisions the retention sweep prunes) would never be reused: the files
 * would grow with every turn, whatever the retention. This does on the
 * embedded database what autovacuum does on PostgreSQL, with autovacuum's
 * default thresholds: every minute, each table with enough dead rows is
 * vacuumed, and each with enough changed rows analysed (the planner's
 * statistics).
 *
 * One statement per table: PGlite is one session, and a statement holds it
 * (and, PGlite running on the server's thread, the event loop) while it runs.
 */
import { Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"

/** How often the tables are looked at. */
export const VACUUM_INTERVAL = Duration.minutes(1)

/** A table's row counts, as `pg_stat_user_tables` keeps them. */
export interface TableActivity {
  readonly table: string
  readonly live: number
  readonly dead: number
  /** Rows inserted, updated or deleted since the table was last analysed. */
  readonly modified: number
}

export type Maintenance = "VACUUM" | "VACUUM (ANALYZE)" | "ANALYZE"

/**
 * What a table is due, by autovacuum's default settings: a vacuum past 50 dead rows + 20 % of its
 * live ones (`autovacuum_vacuum_threshold`, `autovacuum_vacuum_scale_factor`), an analyse past 50
 * changed rows + 10 % (`autovacuum_analyze_*`), both in one statement when both are due.
 */
export const maintenanceDue = (t: TableActivity): Maintenance | undefined => {
  const vacuum = t.dead > 50 + 0.2 * t.live
  const analyze = t.modified > 50 + 0.1 * t.live
  return vacuum ? (analyze ? "VACUUM (ANALYZE)" : "VACUUM") : analyze ? "ANALYZE" : undefined
}

const quoted = (identifier: string) => `"${identifier.replaceAll("\"", "\"\"")}"`

/** Vacuums and analyses the tables that are due, one statement each; returns what it ran, in order. */
export const maintainTables = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const tables = yield* sql<TableActivity>`
    SELECT relname AS table, n_live_tup::float8 AS live, n_dead_tup::float8 AS dead, n_mod_since_analyze::float8 AS modified
    FROM pg_stat_user_tables WHERE schemaname = current_schema() ORDER BY relname`
  const ran: Array<{ readonly table: string; readonly maintenance: Maintenance }> = []
  for (const table of tables) {
    const maintenance = maintenanceDue(table)
    if (maintenance === undefined) continue
    // Not prepared: the connection's statement cache would keep one per table for nothing.
    yield* sql.unsafe(`${maintenance} ${quoted(table.table)}`).unprepared
    ran.push({ table: table.table, maintenance })
  }
  return ran
})

/** The loop, for the embedded database's scope: a failed round is logged and the next one tries again. */
export const layer = Layer.effectDiscard(Effect.gen(function*() {
  const round = maintainTables.pipe(
    Effect.timed,
    Effect.tap(([took, ran]) =>
      ran.length === 0
        ? Effect.void
        : Effect.logDebug(
          `embedded database: ${ran.map((r) => `${r.maintenance} ${r.table}`).join(", ")} (${Duration.toMillis(took).toFixed(0)} ms)`
        )
    ),
    Effect.catchCause((cause) => Effect.logWarning("embedded database: vacuum failed", cause))
  )
  yield* Effect.forkScoped(Effect.forever(Effect.sleep(VACUUM_INTERVAL).pipe(Effect.andThen(round))))
}))
