/**
 * PGlite (PostgreSQL compiled to WASM) served on a private unix socket
 * (`EmbeddedWire`) and reached through the same `@effect/sql-pg` client as a
 * real server, so the repositories run the same SQL on both backends.
 *
 * PGlite is a single backend session: the pool is kept at one connection so
 * session state and locks behave as they would on one connection. That is why
 * nothing in Switchboard holds a transaction across a slow call.
 */
import { PGlite } from "@electric-sql/pglite"
import { PgClient } from "@effect/sql-pg"
import { Data, Effect, Layer } from "effect"
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { EmbeddedDatabase } from "./EmbeddedDatabase.ts"
import { serveWire } from "./EmbeddedWire.ts"
import * as EmbeddedVacuum from "./EmbeddedVacuum.ts"

/** The embedded database is one process's: a second server on the same DATA_DIR would corrupt it. */
export class DataDirInUse extends Data.TaggedError("DataDirInUse")<{ readonly message: string }> {}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** An exclusive lock file beside the data directory, holding our pid; a dead holder's lock is taken over. */
const lockDataDir = (dataDir: string) =>
  Effect.acquireRelease(
    Effect.suspend(() => {
      const lockPath = `${dataDir}.lock`
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          const fd = openSync(lockPath, "wx")
          writeSync(fd, String(process.pid))
          closeSync(fd)
          return Effect.succeed(lockPath)
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== "EEXIST") return Effect.die(e)
          const holder = Number(readFileSync(lockPath, "utf8").trim())
          if (Number.isInteger(holder) && holder > 0 && isAlive(holder)) {
            return Effect.fail(new DataDirInUse({
              message: `The embedded database in ${dataDir} is in use by process ${holder}. ` +
                "Give each server its own DATA_DIR, or set DATABASE_URL to share a PostgreSQL between servers."
            }))
          }
          rmSync(lockPath, { force: true }) // stale: its process is gone
        }
      }
      return Effect.die(new Error(`could not lock ${dataDir}`))
    }),
    (lockPath) => Effect.sync(() => rmSync(lockPath, { force: true }))
  )

/**
 * Starts PGlite and its socket server for the scope; returns the socket path.
 * `dataDir` undefined: in memory (tests); a path: persisted there.
 */
export const startEmbeddedPg = (dataDir: string | undefined) =>
  Effect.gen(function*() {
    const socketDir = yield* Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "switchboard-pg-"))),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    )
    if (dataDir !== undefined) {
      mkdirSync(dataDir, { recursive: true })
      yield* lockDataDir(dataDir)
    }
    const db = yield* Effect.acquireRelease(
      Effect.promise(() => PGlite.create(dataDir)),
      (db) => Effect.promise(() => db.close())
    )
    const socketPath = join(socketDir, ".s.PGSQL.5432")
    yield* Effect.acquireRelease(
      Effect.promise(() => serveWire(db, { path: socketPath })),
      (server) => Effect.promise(() => server.close())
    )
    return socketPath
  })


/** A client of an embedded database's socket: one connection, as PGlite is one session. */
export const layerEmbeddedClient = (socketPath: string) =>
  Layer.merge(
    PgClient.layer({ path: socketPath, username: "postgres", database: "postgres", maxConnections: 1 }),
    Layer.succeed(EmbeddedDatabase, true)
  )

/** The embedded database, a client of it, and its vacuum (it has no autovacuum of its own). */
export const layerEmbeddedPg = (dataDir: string | undefined) =>
  EmbeddedVacuum.layer.pipe(Layer.provideMerge(Layer.unwrap(Effect.map(startEmbeddedPg(dataDir), layerEmbeddedClient))))

export { EmbeddedDatabase }
