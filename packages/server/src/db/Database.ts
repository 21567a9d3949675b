/**
 * The database: a real PostgreSQL when `DATABASE_URL` is set, otherwise the
 * embedded PGlite under `DATA_DIR` — with migrations applied before anything
 * else can use it.
 */
import { PgClient } from "@effect/sql-pg"
import { Config, Effect, Layer, Option } from "effect"
import type { SqlClient } from "effect/sql"
import { join } from "node:path"
import { layerEmbeddedPg } from "./EmbeddedPostgres.ts"
import { MigrationsLive } from "./Migrations.ts"

const layerClient = Layer.unwrap(Effect.gen(function*() {
  const url = yield* Config.option(Config.Redacted("DATABASE_URL"))
  if (Option.isSome(url)) {
    yield* Effect.logInfo("database: PostgreSQL from DATABASE_URL")
    return PgClient.layer({ url: url.value, maxConnections: 10 })
  }
  const dataDir = join(yield* Config.String("DATA_DIR").pipe(Config.withDefault("./.switchboard")), "pgdata")
  yield* Effect.logInfo(`database: embedded PGlite in ${dataDir}`)
  return layerEmbeddedPg(dataDir)
}))

/** Migrated database from configuration; provides `SqlClient` and `PgClient`. */
export const DatabaseLive = MigrationsLive.pipe(Layer.provideMerge(layerClient))

/** Migrated database over an explicit client layer (tests, tools). */
export const layerMigrated = <E, R>(client: Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, E, R>) =>
  MigrationsLive.pipe(Layer.provideMerge(client))
