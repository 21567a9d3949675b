/**
 * PGlite (PostgreSQL compiled to WASM) served on a private unix socket and
 * reached through the same `@effect/sql-pg` client as a real server, so the
 * repositories run the same SQL on both backends.
 *
 * PGlite is a single backend session: the pool is kept at one connection so
 * session state and locks behave as they would on one connection. That is why
 * nothing in Switchboard holds a transaction across a slow call.
 */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer } from "effect"
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** `dataDir` undefined: in memory (tests); a path: persisted there. */
export const layerEmbeddedPg = (dataDir: string | undefined) =>
  Layer.unwrap(Effect.gen(function*() {
    const socketDir = yield* Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "switchboard-pg-"))),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    )
    if (dataDir !== undefined) mkdirSync(dataDir, { recursive: true })
    const db = yield* Effect.acquireRelease(
      Effect.promise(() => PGlite.create(dataDir)),
      (db) => Effect.promise(() => db.close())
    )
    const socketPath = join(socketDir, ".s.PGSQL.5432")
    yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections: 4 })
        await server.start()
        return server
      }),
      (server) => Effect.promise(() => server.stop())
    )
    return PgClient.layer({ path: socketPath, username: "postgres", database: "postgres", maxConnections: 1 })
  }))
