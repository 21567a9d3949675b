/**
 * PGlite's wire protocol served on a socket, for the same SQL client a real
 * PostgreSQL has (`EmbeddedPostgres`).
 *
 * PGlite executes a protocol message synchronously, so everything a read
 * brought runs in that read's callback and the replies leave in one write. A
 * statement is several messages (bind, execute, sync); handling each on its
 * own turn of the event loop, behind a promise queue, with its reply written
 * alone, cost the embedded server ~0.5–1 ms of CPU per turn and delayed
 * every stream's deltas behind it (docs/performance.md, "Streamed turns").
 *
 * PGlite is one session, shared by every connection: while one connection is
 * inside a transaction block, or between an extended-protocol message and its
 * sync, the others' messages wait for it, and a connection that goes away
 * there has its work rolled back, as a PostgreSQL backend's would be.
 */
import type { PGlite } from "@electric-sql/pglite"
import { createServer } from "node:net"
import type { Server, Socket } from "node:net"

const SSL_REQUEST = 80877103
const GSSENC_REQUEST = 80877104
const CANCEL_REQUEST = 80877102
/** PostgreSQL's own bound on a message (`MaxAllocSize`): a longer length is not a message. */
const MAX_MESSAGE = 0x3fffffff
const EMPTY = Buffer.alloc(0)
const SYNC = 0x53
const QUERY = 0x51
const TERMINATE = 0x58
/**
 * What a connection gone mid-work leaves to undo: `ROLLBACK` ends a transaction block or aborts an
 * extended-protocol one (PostgreSQL aborts a statement's implicit transaction on `ROLLBACK`), and
 * a sync ends the protocol's skipping of messages after an error, which would skip `ROLLBACK`.
 */
const UNDO = (() => {
  const text = Buffer.from("ROLLBACK\0")
  const rollback = Buffer.alloc(5 + text.length)
  rollback.writeUInt8(QUERY, 0)
  rollback.writeInt32BE(4 + text.length, 1)
  text.copy(rollback, 5)
  const sync = Buffer.alloc(5)
  sync.writeUInt8(SYNC, 0)
  sync.writeInt32BE(4, 1)
  return [rollback, sync]
})()

interface Connection {
  readonly socket: Socket
  /** Bytes of a message not complete yet, or of messages waiting for another connection's transaction. */
  pending: Buffer
  /** Before the startup message, messages carry no type byte. */
  started: boolean
  /** Extended-protocol messages ran since the last sync (or simple query): the session is mid-statement. */
  unsynced: boolean
  waiting: boolean
}

export interface WireServer {
  readonly close: () => Promise<void>
}

/**
 * Serves `db` on `listen` (a unix socket's path, or a TCP port on 127.0.0.1) until `close`.
 */
export const serveWire = (db: PGlite, listen: { readonly path: string } | { readonly port: number }): Promise<WireServer> => {
  const connections = new Set<Connection>()
  /** The connection whose transaction block or unsynced statement is open: only its messages run. */
  let owner: Connection | undefined
  const waiting: Array<Connection> = []

  /** Runs one message for `connection`, its replies written to its socket (corked by the caller). */
  const execute = (connection: Connection, message: Uint8Array, typed: boolean) => {
    db.execProtocolRawStream(message, {
      // Nothing to sync: a data directory on disk is written through as PostgreSQL writes, and one in memory has no disk.
      syncToFs: false,
      onRawData: (reply) => {
        // A view of PGlite's memory, reused by the next message: copied before it is queued.
        if (reply.length > 0 && !connection.socket.destroyed) connection.socket.write(Buffer.from(reply))
      }
    }).catch((error: unknown) => connection.socket.destroy(error instanceof Error ? error : new Error(String(error))))
    if (typed) connection.unsynced = message[0] !== SYNC && message[0] !== QUERY
    owner = connection.unsynced || db.isInTransaction() ? connection : undefined
  }

  /** The length of the complete message at `offset`; 0 while it is incomplete, -1 when it is no message. */
  const lengthAt = (connection: Connection, buffer: Buffer, offset: number) => {
    const available = buffer.length - offset
    const header = connection.started ? 5 : 4
    if (available < header) return 0
    // The length counts itself (4 bytes), not the type byte before it.
    const length = connection.started ? 1 + buffer.readInt32BE(offset + 1) : buffer.readInt32BE(offset)
    if (length < header || length > MAX_MESSAGE) return -1
    return available >= length ? length : 0
  }

  /** Runs the connection's complete messages, until another connection holds the session. */
  const run = (connection: Connection) => {
    const { socket } = connection
    const buffer = connection.pending
    let offset = 0
    socket.cork()
    try {
      while (!socket.destroyed) {
        if (owner !== undefined && owner !== connection) {
          if (!connection.waiting) {
            connection.waiting = true
            waiting.push(connection)
          }
          break
        }
        const length = lengthAt(connection, buffer, offset)
        if (length === 0) break
        if (length < 0) {
          socket.destroy()
          break
        }
        const message = buffer.subarray(offset, offset + length)
        offset += length
        if (connection.started && message[0] === TERMINATE) {
          // The session is shared: a client's goodbye ends its connection, not PGlite's session.
          socket.end()
          break
        }
        if (!connection.started) {
          const code = length >= 8 ? message.readInt32BE(4) : 0
          if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
            socket.write("N") // no encryption on a private socket
            continue
          }
          if (code === CANCEL_REQUEST) continue // PGlite runs one statement at a time, to its end
          connection.started = true
          execute(connection, message, false)
          continue
        }
        execute(connection, message, true)
      }
    } finally {
      socket.uncork()
    }
    connection.pending = offset === buffer.length ? EMPTY : Buffer.from(buffer.subarray(offset))
  }

  /** Once no connection holds the session, those that waited for it run, in order. */
  const resume = () => {
    while (owner === undefined && waiting.length > 0) {
      const next = waiting.shift()!
      next.waiting = false
      run(next)
    }
  }

  const gone = (connection: Connection) => {
    if (!connections.delete(connection)) return
    const queued = waiting.indexOf(connection)
    if (queued >= 0) waiting.splice(queued, 1)
    if (owner === connection) {
      owner = undefined
      for (const message of UNDO) db.execProtocolRawStream(message, { syncToFs: false, onRawData: () => {} }).catch(() => {})
    }
    resume()
  }

  const server: Server = createServer((socket) => {
    const connection: Connection = { socket, pending: EMPTY, started: false, unsynced: false, waiting: false }
    connections.add(connection)
    socket.setNoDelay(true)
    socket.on("data", (bytes: Buffer) => {
      connection.pending = connection.pending.length === 0 ? bytes : Buffer.concat([connection.pending, bytes])
      if (!connection.waiting) run(connection)
      resume()
    })
    socket.on("error", () => socket.destroy())
    socket.on("close", () => gone(connection))
  })

  return new Promise((resolve, reject) => {
    server.once("error", reject)
    const listening = () => {
      server.off("error", reject)
      // A failed accept is the client's to see (its connect fails); the socket goes on serving.
      server.on("error", () => {})
      resolve({
        close: () =>
          new Promise<void>((done) => {
            for (const connection of connections) connection.socket.destroy()
            server.close(() => done())
          })
      })
    }
    if ("path" in listen) server.listen(listen.path, listening)
    else server.listen(listen.port, "127.0.0.1", listening)
  })
}
