/**
 * The chunk log (docs/streaming.md). Its sweep: rows of a turn whose replica died are deleted once
 * they are old, whether the chat's marker row is gone or is still there but expired (nothing
 * deletes a dead turn's marker until the chat's next turn replaces it); a running turn's rows stay.
 * Its writes (PostgreSQL): a write the database refuses is made again, so a follower elsewhere
 * misses no chunk.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { publish } from "../../src/chat/stream/LiveTurn.ts"
import { makeTurnLog } from "../../src/chat/stream/TurnLog.ts"
import { TurnStreams } from "../../src/chat/stream/TurnStreams.ts"
import { eventually } from "../support/JobsHelpers.ts"
import { backend, TestDatabase } from "../support/TestDatabase.ts"
import { storedChatKey } from "../../src/users/ChatKey.ts"

describe("turn log", () => {
  layer(TestDatabase)("sweep", (it) => {
    it.effect("deletes old rows of a turn without a live marker, and keeps a running turn's", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO chats (id) VALUES ('c-dead'), ('c-live'), ('c-none')`
        yield* sql`INSERT INTO chat_turns (chat_id, turn_id, expires_at) VALUES
          ('c-dead', 't-dead', now() - interval '1 hour'),
          ('c-live', 't-live', now() + interval '1 hour')`
        for (const [chat, turn] of [["c-dead", "t-dead"], ["c-live", "t-live"], ["c-none", "t-none"]] as const) {
          yield* sql`INSERT INTO turn_chunks (turn_id, seq, chat_id, event, written_at)
            VALUES (${turn}, 0, ${chat}, 'data: {}', now() - interval '20 minutes')`
        }
        yield* sql`INSERT INTO turn_chunks (turn_id, seq, chat_id, event) VALUES ('t-dead', 1, 'c-dead', 'data: {}')`

        yield* makeTurnLog(sql).sweep

        const left = yield* sql<{ turn_id: string; seq: number }>`SELECT turn_id, seq FROM turn_chunks ORDER BY turn_id, seq`
        assert.deepStrictEqual(left.map((r) => `${r.turn_id}:${r.seq}`), ["t-dead:1", "t-live:0"])
      }))
  })
})

describe.skipIf(backend === "embedded")("turn log writes (PostgreSQL)", () => {
  layer(TurnStreams.layer.pipe(Layer.provideMerge(TestDatabase)), { excludeTestServices: true })("a refused write", (it) => {
    it.effect("is made again: the followed turn's rows are all there, in order, once the database takes them", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const streams = yield* TurnStreams
        const seqs = sql<{ seq: number }>`SELECT seq FROM turn_chunks WHERE turn_id = 'lt-1' ORDER BY seq`.pipe(
          Effect.map((rows) => rows.map((r) => r.seq))
        )
        const refusing = yield* Deferred.make<void>()
        const end = yield* Deferred.make<void>()
        const turn = yield* streams.run(storedChatKey("lt-chat"), true, (live) =>
          Effect.gen(function*() {
            live.turnId = "lt-1"
            publish(live, { type: "start", messageId: "m1" })
            publish(live, { type: "text-start", id: "t" })
            // A follower on another replica asks for the turn: from now on its chunks are written. Asked
            // until heard, as a follower does: the replica's listener may not be listening yet.
            const ask = makeTurnLog(sql).askFollow("lt-1")
            yield* eventually(ask.pipe(Effect.andThen(seqs)), (s) => s.length === 2, "the first rows")
            yield* Deferred.await(refusing)
            publish(live, { type: "text-delta", id: "t", delta: "lost " })
            publish(live, { type: "text-delta", id: "t", delta: "before" })
            yield* Deferred.await(end)
            publish(live, { type: "text-end", id: "t" })
            publish(live, { type: "finish" })
          })).pipe(Effect.forkChild)
        yield* eventually(seqs, (s) => s.length === 2, "the first rows")

        yield* sql`ALTER TABLE turn_chunks ADD CONSTRAINT refuse_writes CHECK (false) NOT VALID`
        yield* Deferred.succeed(refusing, undefined)
        // Several flushes (every 40 ms) meet the refusal.
        yield* Effect.sleep("300 millis")
        assert.deepStrictEqual(yield* seqs, [0, 1])
        yield* sql`ALTER TABLE turn_chunks DROP CONSTRAINT refuse_writes`
        yield* Deferred.succeed(end, undefined)
        yield* Fiber.join(turn)

        assert.deepStrictEqual(yield* eventually(seqs, (s) => s.length >= 6, "every row"), [0, 1, 2, 3, 4, 5])
      }))
  })
})
