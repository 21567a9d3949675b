/**
 * The database: a real PostgreSQL when `DATABASE_URL` is set, otherwise the
 * embedded PGlite under `DATA_DIR` — with migrations applied before anything
 * else can use it.
 *
 * A server often starts beside its database (a compose file, a rolling
 * deploy), so an unreachable PostgreSQL is waited for, with backoff, for up to
 * `DATABASE_WAIT_SECONDS` before the server gives up.
 */
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Layer, Option, Redacted, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { join } from "node:path"
import { DatabaseMaxConnectionsSetting, DatabaseUrlSetting, DatabaseWaitSecondsSetting, DataDirSetting } from "./DatabaseSettings.ts"
import * as Migrations from "./Migrations.ts"

/** One connection, one `SELECT 1`, closed again: does the server at `url` answer? */
const probe = (url: Redacted.Redacted) =>
  SqlClient.SqlClient.use((sql) => sql`SELECT 1`).pipe(
    Effect.provide(PgClient.layer({ url, maxConnections: 1, connectTimeout: "5 seconds" }))
  )

/** Waits until the PostgreSQL at `url` answers, for at most `wait`; the last failure if it never does. */
export const waitForDatabase = (url: Redacted.Redacted, wait: Duration.Input) =>
  probe(url).pipe(
    Effect.tapError((error) => {
      // The reason's cause says why (refused, unknown host, no such database); it never holds the password.
      const cause = (error.reason as { cause?: unknown }).cause
      const why = cause instanceof Error ? `: ${cause.message}` : ""
      return Effect.logWarning(`database not reachable yet (${error.message}${why})`)
    }),
    // Backoff from 200 ms, never more than 5 s apart (min = union), only within `wait` (max = intersection).
    Effect.retry(Schedule.max([
      Schedule.min([Schedule.exponential("200 millis", 1.5), Schedule.spaced("5 seconds")]),
      Schedule.during(wait)
    ]))
  )

const layerClient = Layer.unwrap(Effect.gen(function*() {
  const url = yield* DatabaseUrlSetting.config
  if (Option.isSome(url)) {
    const waitSeconds = yield* DatabaseWaitSecondsSetting.config
    yield* Effect.logInfo("database: PostgreSQL from DATABASE_URL")
    yield* waitForDatabase(url.value, Duration.seconds(Math.max(0, waitSeconds)))
    const maxConnections = yield* DatabaseMaxConnectionsSetting.config
    return PgClient.layer({ url: url.value, maxConnections: Math.max(1, maxConnections) })
  }
  const dataDir = join(yield* DataDirSetting.config, "pgdata")
  yield* Effect.logInfo(`database: embedded PGlite in ${dataDir}`)
  // Imported here, not at the top: a server on PostgreSQL never loads PGlite (its modules are megabytes resident).
  const { layerEmbeddedPg } = yield* Effect.promise(() => import("./EmbeddedPostgres.ts"))
  return layerEmbeddedPg(dataDir)
}))

/** Migrated database from configuration; provides `SqlClient` and `PgClient`. */
export const layer = Migrations.layer.pipe(Layer.provideMerge(layerClient))

/** Migrated database over an explicit client layer (tests, tools). */
export const layerMigrated = <E, R>(client: Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, E, R>) =>
  Migrations.layer.pipe(Layer.provideMerge(client))
