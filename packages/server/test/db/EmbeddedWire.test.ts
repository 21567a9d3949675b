/**
 * PGlite's wire protocol on a socket (`EmbeddedWire`): PGlite is one session, so
 * a connection's transaction block, or its statement before the sync, keeps the
 * others' statements waiting, and a connection that goes away there has its
 * work rolled back. PGlite itself here,
 * whatever DATABASE_URL says: this is the embedded database's own plumbing.
 */
import { PGlite } from "@electric-sql/pglite"
import { assert, describe, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { mkdtempSync, rmSync } from "node:fs"
import { connect } from "node:net"
import type { Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { serveWire } from "../../src/db/EmbeddedWire.ts"

/** PGlite served on a socket for the scope; returns the socket's path. */
const served = Effect.gen(function*() {
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "switchboard-wire-"))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )
  const db = yield* Effect.acquireRelease(Effect.promise(() => PGlite.create()), (db) => Effect.promise(() => db.close()))
  const path = join(dir, ".s.PGSQL.5432")
  yield* Effect.acquireRelease(Effect.promise(() => serveWire(db, { path })), (server) => Effect.promise(() => server.close()))
  return path
})

/** A client of its own (its own pool and connection) for the scope. */
const clientOf = (path: string) =>
  Layer.build(PgClient.layer({ path, username: "postgres", database: "postgres", maxConnections: 1 }))

// The protocol's bytes, for a client that hangs up where a real one would not.
const startupMessage = () => {
  const body = Buffer.from("user\0postgres\0database\0postgres\0\0")
  const message = Buffer.alloc(8 + body.length)
  message.writeInt32BE(message.length, 0)
  message.writeInt32BE(196608, 4)
  body.copy(message, 8)
  return message
}
const sslRequest = () => {
  const message = Buffer.alloc(8)
  message.writeInt32BE(8, 0)
  message.writeInt32BE(80877103, 4)
  return message
}
const queryMessage = (text: string) => {
  const body = Buffer.from(`${text}\0`)
  const message = Buffer.alloc(5 + body.length)
  message.write("Q", 0)
  message.writeInt32BE(4 + body.length, 1)
  body.copy(message, 5)
  return message
}

const typed = (type: string, body: Buffer) => {
  const message = Buffer.alloc(5 + body.length)
  message.write(type, 0)
  message.writeInt32BE(4 + body.length, 1)
  body.copy(message, 5)
  return message
}
/** An unnamed statement's parse, bind and execute, and a flush for its answer: no sync. */
const unsyncedStatement = (text: string) =>
  Buffer.concat([
    typed("P", Buffer.concat([Buffer.from(`\0${text}\0`), Buffer.alloc(2)])),
    typed("B", Buffer.concat([Buffer.from("\0\0"), Buffer.alloc(6)])),
    typed("E", Buffer.concat([Buffer.from("\0"), Buffer.alloc(4)])),
    typed("H", Buffer.alloc(0))
  ])

/** A raw connection: what it received so far, and a wait for bytes to satisfy `done`. */
const rawClient = (path: string) =>
  Effect.acquireRelease(
    Effect.callback<{ socket: Socket; received: () => Buffer; until: (done: (b: Buffer) => boolean) => Effect.Effect<Buffer> }>((resume) => {
      let received = Buffer.alloc(0)
      const waiters = new Set<() => void>()
      const socket = connect(path, () =>
        resume(Effect.succeed({
          socket,
          received: () => received,
          until: (done) =>
            Effect.callback<Buffer>((resumeWait) => {
              const check = () => {
                if (!done(received)) return
                waiters.delete(check)
                resumeWait(Effect.succeed(received))
              }
              waiters.add(check)
              check()
            })
        })))
      socket.on("data", (bytes: Buffer) => {
        received = Buffer.concat([received, bytes])
        for (const check of [...waiters]) check()
      })
      socket.on("error", () => {})
    }),
    ({ socket }) => Effect.sync(() => socket.destroy())
  )

/** The transaction status of the last ReadyForQuery in `bytes` (after the startup phase): I, T or E. */
const lastStatus = (bytes: Buffer, from = 0): string | undefined => {
  let status: string | undefined
  for (let offset = from; offset + 5 <= bytes.length;) {
    const length = bytes.readInt32BE(offset + 1)
    if (offset + 1 + length > bytes.length) break
    if (bytes[offset] === 0x5a) status = String.fromCharCode(bytes[offset + 5]!)
    offset += 1 + length
  }
  return status
}

describe("the embedded database's socket", () => {
  it.live("a statement from another connection waits for a transaction block to end, and sees what it committed", () =>
    Effect.gen(function*() {
      const path = yield* served
      const first = yield* clientOf(path)
      const second = yield* clientOf(path)
      const sql = (context: typeof first) => <A, E>(use: (sql: SqlClient.SqlClient) => Effect.Effect<A, E>) =>
        SqlClient.SqlClient.use(use).pipe(Effect.provide(context))
      yield* sql(first)((sql) => sql`CREATE TABLE t (n int)`)

      const inside = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const transaction = yield* Effect.forkChild(sql(first)((sql) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO t VALUES (1)`
          yield* Deferred.succeed(inside, undefined)
          yield* Deferred.await(release)
        }))
      ))
      yield* Deferred.await(inside)
      const count = yield* Effect.forkChild(sql(second)((sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM t`))
      yield* Effect.sleep("300 millis")
      assert.isUndefined(count.pollUnsafe(), "the other connection's statement waits while the block is open")

      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(transaction)
      const rows = yield* Fiber.join(count)
      assert.deepStrictEqual(rows.map((r) => r.n), [1])
    }).pipe(Effect.scoped), 30_000)

  /**
   * A raw connection leaves an insert uncommitted (`leave`: its bytes, and what answers them) and
   * goes away; meanwhile a client's count waits, and once it is gone counts nothing.
   */
  const goneMidWork = (leave: Buffer, answered: (received: Buffer) => boolean) =>
    Effect.gen(function*() {
      const path = yield* served
      const context = yield* clientOf(path)
      const sql = <A, E>(use: (sql: SqlClient.SqlClient) => Effect.Effect<A, E>) =>
        SqlClient.SqlClient.use(use).pipe(Effect.provide(context))
      yield* sql((sql) => sql`CREATE TABLE t (n int)`)

      const raw = yield* rawClient(path)
      raw.socket.write(startupMessage())
      yield* raw.until((b) => lastStatus(b) === "I")
      const before = raw.received().length
      raw.socket.write(leave)
      yield* raw.until((b) => answered(b.subarray(before)))

      const count = yield* Effect.forkChild(sql((sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM t`))
      yield* Effect.sleep("300 millis")
      assert.isUndefined(count.pollUnsafe(), "waits for the raw connection")
      raw.socket.destroy()
      const rows = yield* Fiber.join(count)
      assert.deepStrictEqual(rows.map((r) => r.n), [0], "the insert was rolled back")
      // The session is clean: a transaction of this client's commits.
      yield* sql((sql) => sql.withTransaction(sql`INSERT INTO t VALUES (2)`))
      const after = yield* sql((sql) => sql<{ n: number }>`SELECT n FROM t`)
      assert.deepStrictEqual(after.map((r) => r.n), [2])
    }).pipe(Effect.scoped)

  it.live("a connection gone inside a transaction block: the block is rolled back and the others go on", () =>
    goneMidWork(queryMessage("BEGIN; INSERT INTO t VALUES (1)"), (received) => lastStatus(received) === "T"), 30_000)

  // CommandComplete answers the insert: it ran, in the statement's own transaction, which only a sync commits.
  it.live("a connection gone between a statement and its sync: the statement is rolled back and the others go on", () =>
    goneMidWork(unsyncedStatement("INSERT INTO t VALUES (1)"), (received) => received.includes("INSERT 0 1")), 30_000)

  it.live("a client's goodbye closes its connection, and the session goes on for the others", () =>
    Effect.gen(function*() {
      const path = yield* served
      const context = yield* clientOf(path)
      const raw = yield* rawClient(path)
      raw.socket.write(startupMessage())
      yield* raw.until((b) => lastStatus(b) === "I")
      const closed = Effect.callback<void>((resume) => {
        raw.socket.once("close", () => resume(Effect.void))
      })
      raw.socket.write(typed("X", Buffer.alloc(0)))
      yield* closed
      const rows = yield* SqlClient.SqlClient.use((sql) => sql<{ n: number }>`SELECT 41 + 1 AS n`).pipe(Effect.provide(context))
      assert.deepStrictEqual(rows.map((r) => r.n), [42])
    }).pipe(Effect.scoped), 30_000)

  it.live("encryption is declined, and a message that arrives in pieces is run once it is whole", () =>
    Effect.gen(function*() {
      const path = yield* served
      const raw = yield* rawClient(path)
      raw.socket.write(sslRequest())
      const answer = yield* raw.until((b) => b.length >= 1)
      assert.strictEqual(answer.toString("latin1", 0, 1), "N")

      const startup = startupMessage()
      raw.socket.write(startup.subarray(0, 3))
      yield* Effect.sleep("100 millis")
      assert.strictEqual(raw.received().length, 1, "nothing answered to part of a message")
      raw.socket.write(startup.subarray(3))
      yield* raw.until((b) => lastStatus(b, 1) === "I")

      const before = raw.received().length
      raw.socket.write(queryMessage("SELECT 41 + 1"))
      const after = yield* raw.until((b) => lastStatus(b, before) === "I")
      assert.include(after.toString("latin1", before), "42")
    }).pipe(Effect.scoped), 30_000)
})
