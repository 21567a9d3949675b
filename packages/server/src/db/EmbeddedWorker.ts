/**
 * The worker thread that holds the embedded database: PGlite and its wire
 * server (`EmbeddedWire`), on the unix socket the server's SQL client reaches.
 *
 * PGlite runs every statement synchronously, in WASM, on the thread that holds
 * it: in the server's own thread, a burst of turns paid for every statement
 * with every stream's deltas (a third of the server's busy time under a
 * thousand turns at once, docs/performance.md "Scale"). Here the statements
 * run beside the event loop, on the machine's other cores.
 *
 * Input: `{ dataDir, socketPath }` as `workerData`. Output: `ready` once the
 * socket listens, or `failed` with the reason. A `close` message closes the
 * socket and the database, then answers `closed`.
 */
import { PGlite } from "@electric-sql/pglite"
import { parentPort, workerData } from "node:worker_threads"
import { serveWire } from "./EmbeddedWire.ts"

export interface EmbeddedWorkerData {
  /** undefined: in memory (tests); a path: persisted there. */
  readonly dataDir: string | undefined
  readonly socketPath: string
}

export type EmbeddedWorkerMessage =
  | { readonly _tag: "ready" }
  | { readonly _tag: "failed"; readonly message: string }
  | { readonly _tag: "closed" }

const post = (message: EmbeddedWorkerMessage) => parentPort?.postMessage(message)

const { dataDir, socketPath } = workerData as EmbeddedWorkerData

try {
  const db = await PGlite.create(dataDir)
  const server = await serveWire(db, { path: socketPath })
  parentPort?.on("message", (message: unknown) => {
    if (message !== "close") return
    void server.close().then(() => db.close()).finally(() => {
      post({ _tag: "closed" })
      parentPort?.close()
    })
  })
  post({ _tag: "ready" })
} catch (error) {
  post({ _tag: "failed", message: error instanceof Error ? error.message : String(error) })
}
