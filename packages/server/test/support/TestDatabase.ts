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
import { layerEmbeddedClient, startEmbeddedPg } from "../../src/db/EmbeddedPostgres.ts"

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

/** A fresh scratch database on the server of `url`, dropped with the scope; returns its URL. */
const scratchPostgres = (url: string) =>
  Effect.gen(function*() {
    const name = `switchboard_test_${randomBytes(6).toString("hex")}`
    yield* Effect.acquireRelease(
      admin(url, (sql) => sql`CREATE DATABASE ${sql(name)}`),
      () => admin(url, (sql) => sql`DROP DATABASE IF EXISTS ${sql(name)} WITH (FORCE)`)
    )
    return withDatabase(url, name)
  })

/**
 * An empty database for the scope, and a way to open clients of it. On
 * PostgreSQL each `client()` is a new Layer, what one server replica holds
 * (its own pool, its own connections), so tests can run several replicas on
 * one database. PGlite is a single session that cannot interleave two
 * clients' statements: there `client()` is always the same Layer, and
 * replicas built with one MemoMap share its one connection (and nothing else).
 */
export const makeTestDatabase = Effect.gen(function*() {
  const url = process.env.DATABASE_URL
  if (url) {
    const scratch = yield* scratchPostgres(url)
    return { client: () => PgClient.layer({ url: Redacted.make(scratch), maxConnections: 5 }), url: scratch as string | undefined }
  }
  const client = layerEmbeddedClient(yield* startEmbeddedPg(undefined))
  // No URL: the embedded database is this process's only (server processes cannot share it).
  return { client: () => client, url: undefined as string | undefined }
})

/** A migrated, empty database; provides `SqlClient` and `PgClient`. */
export const TestDatabase = layerMigrated(Layer.unwrap(Effect.map(makeTestDatabase, (db) => db.client())))
