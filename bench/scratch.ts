/**
 * Scratch databases on the PostgreSQL of `DATABASE_URL`, for the runs that must not read or leave
 * rows anywhere else: created with a name of their own, dropped (with whoever is still connected)
 * at the end.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"

export interface ScratchDatabase {
  readonly url: string
  readonly drop: () => Promise<void>
}

/** One statement on `adminUrl`'s database. */
const onAdmin = (adminUrl: string, statement: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>) =>
  Effect.runPromise(
    SqlClient.SqlClient.use(statement).pipe(
      Effect.provide(PgClient.layer({ url: Redacted.make(adminUrl), maxConnections: 1 }))
    )
  )

/** A new database beside `adminUrl`'s (same server and user), and how to drop it. */
export const createScratchDatabase = async (adminUrl: string, prefix = "switchboard_bench"): Promise<ScratchDatabase> => {
  const name = `${prefix}_${randomBytes(4).toString("hex")}`
  await onAdmin(adminUrl, (sql) => sql`CREATE DATABASE ${sql(name)}`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: () =>
      onAdmin(adminUrl, (sql) => sql`DROP DATABASE IF EXISTS ${sql(name)} WITH (FORCE)`).then(
        () => undefined,
        (error: unknown) => console.error(`could not drop the scratch database ${name}: ${String(error)}`)
      )
  }
}
