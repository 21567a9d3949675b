/**
 * The database for a test file: a scratch database on the PostgreSQL named by
 * `DATABASE_URL` (created fresh, dropped afterwards), or an in-memory PGlite
 * when it is unset — so the same repository tests run on both backends.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { layerMigrated } from "../../src/db/Database.ts"
import { layerEmbeddedPg } from "../../src/db/EmbeddedPostgres.ts"

export const backend = process.env.DATABASE_URL ? "postgres" : "embedded"

const withDatabase = (url: string, database: string) => {
  const u = new URL(url)
  u.pathname = `/${database}`
  return u.toString()
}

const admin = (url: string, statement: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>) =>
  SqlClient.SqlClient.use(statement).pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })),
    Effect.orDie
  )

const layerScratchPostgres = (url: string) =>
  Layer.unwrap(Effect.gen(function*() {
    const name = `switchboard_test_${randomBytes(6).toString("hex")}`
    yield* Effect.acquireRelease(
      admin(url, (sql) => sql`CREATE DATABASE ${sql(name)}`),
      () => admin(url, (sql) => sql`DROP DATABASE IF EXISTS ${sql(name)} WITH (FORCE)`)
    )
    return PgClient.layer({ url: Redacted.make(withDatabase(url, name)), maxConnections: 5 })
  }))

/** A migrated, empty database; provides `SqlClient` and `PgClient`. */
export const TestDatabase = layerMigrated(
  process.env.DATABASE_URL ? layerScratchPostgres(process.env.DATABASE_URL) : layerEmbeddedPg(undefined)
)
