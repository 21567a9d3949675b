/**
 * PGlite (PostgreSQL compiled to WASM) served on a private unix socket
 * (`EmbeddedWire`) from a worker thread of its own (`EmbeddedWorker`), and reached through the same `@effect/sql-pg` client as a
 * real server, so the repositories run the same SQL on both backends.
 *
 * PGlite is a single backend session: the pool is kept at one connection so
 * session state and locks behave as they would on one connection. That is why
 * nothing in Switchboard holds a transaction across a slow call.
 */
import { PgClient } from "@effect/sql-pg"
import { Data, Effect, Layer } from "effect"
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Worker } from "node:worker_threads"
import { EmbeddedDatabase } from "./EmbeddedDatabase.ts"
import type { EmbeddedWorkerData, EmbeddedWorkerMessage } from "./EmbeddedWorker.ts"
import * as EmbeddedVacuum from "./EmbeddedVacuum.ts"

/** The worker's module beside this one: `.ts` from the sources (tests), `.js` from the build. */
const EMBEDDED_WORKER = new URL(`./EmbeddedWorker${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url)

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

/** PGlite and its socket server, in a worker thread (`EmbeddedWorker`): resolves once the socket listens. */
const startWorker = (data: EmbeddedWorkerData) =>
  Effect.callback<Worker, Error>((resume) => {
    const worker = new Worker(EMBEDDED_WORKER, { workerData: data })
    const onMessage = (message: EmbeddedWorkerMessage) => {
      worker.off("error", onError)
      if (message._tag === "ready") resume(Effect.succeed(worker))
      else if (message._tag === "failed") {
        void worker.terminate()
        resume(Effect.fail(new Error(`the embedded database did not start: ${message.message}`)))
      }
    }
    const onError = (error: Error) => {
      worker.off("message", onMessage)
      resume(Effect.fail(error))
    }
    worker.once("message", onMessage)
    worker.once("error", onError)
  }).pipe(Effect.orDie)

/** Closes the socket and the database (a checkpoint on disk), then the thread; terminated if that hangs. */
const stopWorker = (worker: Worker) =>
  Effect.callback<void>((resume) => {
    worker.removeAllListeners("exit")
    worker.once("exit", () => resume(Effect.void))
    worker.postMessage("close")
  }).pipe(
    Effect.timeoutOrElse({ duration: "30 seconds", orElse: () => Effect.promise(() => worker.terminate()).pipe(Effect.asVoid) })
  )

/**
 * Starts PGlite and its socket server, in a worker thread, for the scope;
 * returns the socket path. `dataDir` undefined: in memory (tests); a path:
 * persisted there.
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
    const socketPath = join(socketDir, ".s.PGSQL.5432")
    const worker = yield* Effect.acquireRelease(startWorker({ dataDir, socketPath }), stopWorker)
    // The database gone mid-run is not something a server can serve without: one line, and the process ends.
    worker.once("exit", (code) => {
      process.stderr.write(`switchboard: the embedded database stopped unexpectedly (worker exit code ${code})\n`)
      process.exit(1)
    })
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
