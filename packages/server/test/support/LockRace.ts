/**
 * Races between two replicas' statements, made to happen rather than hoped for (PostgreSQL only:
 * the embedded database is one session, whose statements never interleave). The first replica's
 * part runs inside a transaction: `first` takes its locks (or writes its rows), then the second
 * replica's statement starts — its snapshot taken while the first's work is uncommitted — and the
 * first goes on (`then`) and commits only once PostgreSQL shows the second waiting on it.
 */
import { Context, Effect, Fiber, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { layerMigrated } from "../../src/db/Database.ts"
import { makeTestDatabase } from "./TestDatabase.ts"

/** `layer`'s services as two replicas hold them: each its own pool on one migrated scratch database; `sql` is the first's. */
export const twoReplicas = <ROut, E>(layer: Layer.Layer<ROut, E, SqlClient.SqlClient>) =>
  Effect.gen(function*() {
    const db = yield* makeTestDatabase
    const replica = () => Layer.build(layer.pipe(Layer.provideMerge(layerMigrated(db.client()))))
    const first = yield* replica()
    const second = yield* replica()
    return { first, second, sql: Context.get(first, SqlClient.SqlClient) }
  })

/** Succeeds once a backend other than this one waits on a lock while running a statement whose text holds `text`. */
export const waitingOn = (sql: SqlClient.SqlClient, text: string) =>
  // A transaction reads the activity view from one snapshot unless told to take a new one.
  sql`SELECT pg_stat_clear_snapshot()`.pipe(
    Effect.andThen(sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE wait_event_type = 'Lock' AND query LIKE ${`%${text}%`} AND pid <> pg_backend_pid()`),
    Effect.flatMap((rows) => rows[0]!.n > 0 ? Effect.void : Effect.fail("not waiting yet")),
    Effect.retry(Schedule.spaced("20 millis"))
  )

/**
 * `first`, then `second` begun (on another replica's connection), then `then` once `second`
 * waits on a lock in a statement naming `waitsIn` — all of `first` and `then` in one transaction
 * of `sql`'s (the first replica's). What `then` and `second` answered.
 */
export const raceUnderLock = <A, B>(options: {
  readonly sql: SqlClient.SqlClient
  readonly first: Effect.Effect<unknown>
  readonly then: Effect.Effect<A>
  readonly second: Effect.Effect<B>
  readonly waitsIn: string
}) =>
  Effect.gen(function*() {
    const { fiber, held } = yield* options.sql.withTransaction(Effect.gen(function*() {
      yield* options.first
      const fiber = yield* Effect.forkChild(options.second)
      yield* waitingOn(options.sql, options.waitsIn)
      return { fiber, held: yield* options.then }
    }))
    return { first: held, second: yield* Fiber.join(fiber) }
  })
