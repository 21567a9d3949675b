import { assert, describe, layer } from "@effect/vitest"
import type { ChatMessage } from "@switchboard/domain"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { ChatRepo } from "../../src/chat/ChatRepo.ts"
import { waitingOn } from "../support/LockRace.ts"
import { backend, TestDatabase } from "../support/TestDatabase.ts"
import { storedChatKey } from "../../src/users/ChatKey.ts"

const user = (id: string, content: string): ChatMessage => ({ id, role: "user", content, timestamp: 1 })

/** A chat as a turn leaves it (appends go only to an existing chat). */
const created = (chatId: string) =>
  ChatRepo.use((repo) => repo.openTurn(storedChatKey(chatId), "opening", "1 minute", { _tag: "Marker" }).pipe(Effect.andThen(repo.endTurn(storedChatKey(chatId), "opening"))))

describe(`ChatRepo on ${backend} PostgreSQL`, () => {
  layer(ChatRepo.layer.pipe(Layer.provide(TestDatabase)))("transcripts", (it) => {
    it.effect("appends in order and ignores messages the chat already has", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        yield* created("c-order")
        yield* repo.append(storedChatKey("c-order"), [user("a", "one"), user("b", "two")])
        yield* repo.append(storedChatKey("c-order"), [user("a", "one, edited"), user("b", "two"), user("c", "three")])
        const messages = yield* repo.transcript(storedChatKey("c-order"))
        assert.deepStrictEqual(messages.map((m) => [m.id, m.content]), [["a", "one"], ["b", "two"], ["c", "three"]])
      }))

    it.effect("keeps the whole message: tool calls, results, parts and metadata", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const assistant: ChatMessage = {
          id: "m1", role: "assistant", content: "", timestamp: 2,
          toolCalls: [{ id: "call_1", name: "transcribe_video", args: {}, invalidArgs: "Unexpected token" }]
        }
        const tool: ChatMessage = {
          id: "m2", role: "tool", content: "done", timestamp: 3,
          toolResult: { toolCallId: "call_1", name: "transcribe_video", result: { text: "hi" } },
          parts: [{ type: "text", text: "done" }, { type: "data-card", data: { n: 1 } }],
          metadata: { source: "test", nested: { ok: true } }
        }
        yield* created("c-shape")
        yield* repo.append(storedChatKey("c-shape"), [assistant, tool])
        assert.deepStrictEqual(yield* repo.transcript(storedChatKey("c-shape")), [assistant, tool])
      }))

    it.effect("an append or a turn's end never creates a chat (a deleted one stays deleted)", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        assert.isFalse(yield* repo.append(storedChatKey("c-absent"), [user("a", "one")]))
        yield* created("c-deleted")
        assert.isTrue(yield* repo.remove(storedChatKey("c-deleted")))
        assert.isFalse(yield* repo.remove(storedChatKey("c-deleted")))
        assert.isFalse(yield* repo.append(storedChatKey("c-deleted"), [user("a", "one")]))
        assert.isFalse(yield* repo.endTurn(storedChatKey("c-deleted"), "opening", [user("b", "two")]))
        // A continuation's opening (`Reading`) finds no chat: none made anew, no marker taken.
        assert.strictEqual(yield* repo.openTurn(storedChatKey("c-deleted"), "continuation", "1 minute", { _tag: "Reading" }), "gone")
        for (const chatId of ["c-absent", "c-deleted"]) {
          const error = yield* repo.transcript(storedChatKey(chatId)).pipe(Effect.flip)
          assert.strictEqual(error.code, "chat_not_found", chatId)
        }
      }))

    it.effect("an unknown chat is ChatNotFound", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const error = yield* repo.transcript(storedChatKey("never-seen")).pipe(Effect.flip)
        assert.strictEqual(error.code, "chat_not_found")
        assert.strictEqual(error.chatId, "never-seen")
      }))
  })

  // Real time: marker expiry is decided by the database's clock, not the test clock.
  layer(ChatRepo.layer.pipe(Layer.provide(TestDatabase)), { excludeTestServices: true })("in-flight marker", (it) => {
    it.effect("one turn at a time per chat; released by its holder only", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        assert.isTrue(yield* repo.openTurn(storedChatKey("c-lock"), "t1", "1 minute", { _tag: "Marker" }))
        assert.isFalse(yield* repo.openTurn(storedChatKey("c-lock"), "t2", "1 minute", { _tag: "Marker" }))
        assert.isTrue(yield* repo.openTurn(storedChatKey("c-other"), "t3", "1 minute", { _tag: "Marker" }), "other chats are not blocked")
        yield* repo.endTurn(storedChatKey("c-lock"), "t2") // not the holder: no effect
        assert.isFalse(yield* repo.openTurn(storedChatKey("c-lock"), "t4", "1 minute", { _tag: "Marker" }))
        yield* repo.endTurn(storedChatKey("c-lock"), "t1")
        assert.isTrue(yield* repo.openTurn(storedChatKey("c-lock"), "t5", "1 minute", { _tag: "Marker" }))
      }))

    it.effect("a turn in two statements: messages go in with the marker (only if it is taken) and out with its release", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        assert.isTrue(yield* repo.openTurn(storedChatKey("c-two"), "t1", "1 minute", { _tag: "Marker", messages: [user("u1", "hello")] }))
        // Refused: another turn holds the marker, so its messages are not stored.
        assert.isFalse(yield* repo.openTurn(storedChatKey("c-two"), "t2", "1 minute", { _tag: "Marker", messages: [user("u2", "refused")] }))
        const answer: ChatMessage = { id: "a1", role: "assistant", content: "hi", timestamp: 2 }
        yield* repo.endTurn(storedChatKey("c-two"), "t1", [answer])
        assert.deepStrictEqual((yield* repo.transcript(storedChatKey("c-two"))).map((m) => m.id), ["u1", "a1"])
        // Released: the next turn gets the marker.
        assert.isTrue(yield* repo.openTurn(storedChatKey("c-two"), "t3", "1 minute", { _tag: "Marker", messages: [user("u1", "hello"), user("u3", "again")] }))
        assert.deepStrictEqual((yield* repo.transcript(storedChatKey("c-two"))).map((m) => m.id), ["u1", "a1", "u3"])
      }))

    it.effect("an expired marker (a crashed replica's) can be taken over", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        assert.isTrue(yield* repo.openTurn(storedChatKey("c-expiry"), "dead", "50 millis", { _tag: "Marker" }))
        yield* Effect.sleep("120 millis")
        assert.isTrue(yield* repo.openTurn(storedChatKey("c-expiry"), "alive", "1 minute", { _tag: "Marker" }))
        assert.isFalse(yield* repo.openTurn(storedChatKey("c-expiry"), "late", "1 minute", { _tag: "Marker" }))
      }))

    it.effect("concurrent attempts: exactly one wins", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const fibers = yield* Effect.forEach(
          Array.from({ length: 8 }, (_, i) => `t${i}`),
          (turn) => Effect.forkChild(repo.openTurn(storedChatKey("c-race"), turn, "1 minute", { _tag: "Marker" }))
        )
        const won = yield* Effect.forEach(fibers, Fiber.join)
        assert.strictEqual(won.filter(Boolean).length, 1)
      }))
  })

  // Two sessions: one holding the last turn's end open while the next turn's opening statement waits.
  layer(ChatRepo.layer.pipe(Layer.provideMerge(TestDatabase)), { excludeTestServices: true })("a turn opening as the last one ends", (it) => {
    /**
     * Turn t1 of `chatId` stored q1 and holds the marker; its end (answer a1, release) runs in a
     * transaction held open while `next` starts (its snapshot without a1) and waits for the marker
     * row — seen waiting in PostgreSQL's activity view; then the end commits. Answers what `next` answered.
     */
    const openingAsLastEnds = <A>(chatId: string, next: Effect.Effect<A, never, ChatRepo>) =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const sql = yield* SqlClient.SqlClient
        assert.isTrue(yield* repo.openTurn(storedChatKey(chatId), "t1", "1 minute", { _tag: "Marker", messages: [user("q1", "hi")] }))
        const ended = yield* Deferred.make<void>()
        const commit = yield* Deferred.make<void>()
        const last = yield* Effect.forkChild(sql.withTransaction(Effect.gen(function*() {
          yield* repo.endTurn(storedChatKey(chatId), "t1", [{ id: "a1", role: "assistant", content: "hello", timestamp: 2 }])
          yield* Deferred.succeed(ended, undefined)
          yield* Deferred.await(commit)
        })))
        yield* Deferred.await(ended)
        const opening = yield* Effect.forkChild(next)
        yield* waitingOn(sql, "chat_turns")
        yield* Deferred.succeed(commit, undefined)
        yield* Fiber.join(last)
        return yield* Fiber.join(opening)
      })

    it.effect.skipIf(backend !== "postgres")("reads the answer stored by the release it waited for (PostgreSQL only)", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const stored = yield* openingAsLastEnds("c-race", repo.openTurn(storedChatKey("c-race"), "t2", "1 minute", { _tag: "Reading", messages: [user("q2", "again")] }))
        assert.isTrue(stored !== undefined && stored !== "gone", "the marker is free once the last turn committed")
        assert.includeMembers(stored !== undefined && stored !== "gone" ? stored.transcript.map((m) => m.id) : [], ["q1", "a1"], "the provider's conversation has the last answer")
      }))

    it.effect.skipIf(backend !== "postgres")("a look-then-take does not trust its look across the release it waited for (PostgreSQL only)", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        // Looked at one message (q1); the count in the statement's snapshot is still 1.
        const unchanged = yield* openingAsLastEnds("c-race2", repo.openTurn(storedChatKey("c-race2"), "t2", "1 minute", { _tag: "Unchanged", known: 1, messages: [user("s1", "steer")] }))
        assert.isFalse(unchanged, "taken, but the look is not trusted: nothing appended")
        assert.deepStrictEqual((yield* repo.transcript(storedChatKey("c-race2"))).map((m) => m.id), ["q1", "a1"])
      }))
  })
})
