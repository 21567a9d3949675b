/**
 * Starting before the database: the server waits for PostgreSQL (with
 * backoff) instead of failing at once, and gives up after the window. The
 * "database" that appears late is PGlite served on TCP, so this runs without
 * a PostgreSQL server too.
 */
import { PGlite } from "@electric-sql/pglite"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Redacted } from "effect"
import { waitForDatabase } from "../../src/db/Database.ts"
import { serveWire } from "../../src/db/EmbeddedWire.ts"
import { closedPort } from "@switchboard/providers/testing"

const urlOf = (port: number) => Redacted.make(`postgres://postgres@127.0.0.1:${port}/postgres`)

describe("waiting for the database at start", () => {
  it.live("a database that comes up a moment later is waited for", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(closedPort)
      const waiting = yield* Effect.forkChild(waitForDatabase(urlOf(port), "20 seconds"))
      yield* Effect.sleep("700 millis")
      assert.isUndefined(waiting.pollUnsafe(), "still waiting while nothing listens")

      const db = yield* Effect.acquireRelease(Effect.promise(() => PGlite.create()), (db) => Effect.promise(() => db.close()))
      yield* Effect.acquireRelease(
        Effect.promise(() => serveWire(db, { port })),
        (server) => Effect.promise(() => server.close())
      )
      yield* Fiber.join(waiting)
    }).pipe(Effect.scoped), 30_000)

  it.live("after the window, the last connection error", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(closedPort)
      const started = Date.now()
      const error = yield* waitForDatabase(urlOf(port), "1 second").pipe(Effect.flip)
      assert.strictEqual(error._tag, "SqlError")
      assert.isAtLeast(Date.now() - started, 1_000)
    }))
})
