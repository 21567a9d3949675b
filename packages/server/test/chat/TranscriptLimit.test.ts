/**
 * A chat's transcript has a limit (`CHAT_TRANSCRIPT_MAX_MESSAGES`, `CHAT_TRANSCRIPT_MAX_BYTES`):
 * every turn, `GET …/messages` and `/ui-messages` read it whole, so a chat that grows without end
 * would make each of them slower and larger for good. A chat at its limit takes no more client
 * turns: 409 `chat_full`, before anything is stored or the provider is called, on every route a
 * turn comes by (JSON, streamed, the AI SDK's).
 */
import { assert, describe, layer } from "@effect/vitest"
import type { ChatMessage } from "@switchboard/domain"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { readEventStream, streamInit } from "../support/EventStream.ts"
import { baseUrl, layerTestServer, postJson, request } from "../support/TestServer.ts"

const user = (id: string, content: string): ChatMessage => ({ id, role: "user", content, timestamp: 1 })

const transcriptOf = (chatId: string) =>
  request(`/api/chats/${chatId}/messages`).pipe(Effect.map((res) => res.json.messages as Array<ChatMessage>))

describe("a chat's transcript limit", () => {
  const fake = makeFakeProvider()
  fake.answerWith((params) => Effect.succeed({ content: `answer to: ${params.messages.at(-1)?.content}` }))

  layer(layerTestServer(fake.layer, { CHAT_TRANSCRIPT_MAX_MESSAGES: "4" }), { excludeTestServices: true })("4 messages", (it) => {
    it.effect("a chat holding 4 messages answers 409 chat_full on every route; nothing is stored, no provider call; another chat goes on", () =>
      Effect.gen(function*() {
        const chatId = "full-by-count"
        for (const n of [1, 2]) {
          const turn = yield* postJson("/api/agent/chat", { chatId, messages: [user(`u${n}`, `question ${n}`)] })
          assert.strictEqual(turn.status, 200, turn.text)
        }
        const stored = yield* transcriptOf(chatId)
        assert.strictEqual(stored.length, 4)
        const calls = fake.calls.length

        const refused = yield* postJson("/api/agent/chat", { chatId, messages: [user("u3", "one more")] })
        assert.strictEqual(refused.status, 409, refused.text)
        assert.strictEqual(refused.json.code, "chat_full")
        assert.strictEqual(refused.json.chatId, chatId)
        assert.strictEqual(refused.json.messages, 4)
        assert.isAbove(refused.json.bytes, 0)
        assert.include(refused.json.error, "CHAT_TRANSCRIPT_MAX_MESSAGES")

        // Streamed: the same JSON answer, before any stream.
        const streamed = yield* readEventStream(`${yield* baseUrl}/api/agent/chat`, streamInit({ chatId, messages: [user("u4", "streamed")] }))
        assert.strictEqual(streamed.status, 409)
        assert.strictEqual(streamed.json?.code, "chat_full")

        // The AI SDK's route (its client sends the whole history; the limit is on what is stored).
        const ui = yield* readEventStream(`${yield* baseUrl}/api/ui/chat`, streamInit({
          id: chatId,
          messages: [{ id: "u5", role: "user", parts: [{ type: "text", text: "from useChat" }] }]
        }))
        assert.strictEqual(ui.status, 409)
        assert.strictEqual(ui.json?.code, "chat_full")

        assert.deepStrictEqual((yield* transcriptOf(chatId)).map((m) => m.id), stored.map((m) => m.id), "nothing stored")
        assert.strictEqual(fake.calls.length, calls, "no provider call")

        // The chat's marker was never taken: the user's other chats, and a new one, go on.
        const other = yield* postJson("/api/agent/chat", { chatId: "not-full", messages: [user("u1", "hello")] })
        assert.strictEqual(other.status, 200, other.text)
      }))

    it.effect("a turn that finds 3 stored is let in, and may take the chat past its limit (by at most one turn)", () =>
      Effect.gen(function*() {
        const chatId = "one-turn-past"
        const first = yield* postJson("/api/agent/chat", { chatId, messages: [user("u1", "a"), user("u2", "b")] })
        assert.strictEqual(first.status, 200, first.text)
        assert.strictEqual((yield* transcriptOf(chatId)).length, 3)
        const second = yield* postJson("/api/agent/chat", { chatId, messages: [user("u3", "c"), user("u4", "d")] })
        assert.strictEqual(second.status, 200, second.text)
        assert.strictEqual((yield* transcriptOf(chatId)).length, 6)
        const third = yield* postJson("/api/agent/chat", { chatId, messages: [user("u5", "e")] })
        assert.strictEqual(third.status, 409)
        assert.strictEqual(third.json.messages, 6)
      }))

    it.effect("a turn without chatId stores nothing and has no limit to meet", () =>
      Effect.gen(function*() {
        const turn = yield* postJson("/api/agent/chat", { messages: [1, 2, 3, 4, 5, 6].map((i) => user(`m${i}`, "x")) })
        assert.strictEqual(turn.status, 200, turn.text)
      }))
  })

  layer(layerTestServer(fake.layer, { CHAT_TRANSCRIPT_MAX_BYTES: "2000" }), { excludeTestServices: true })("2,000 bytes", (it) => {
    it.effect("a chat whose messages' JSON reaches 2,000 bytes answers chat_full; messages stored before sizes were kept count too", () =>
      Effect.gen(function*() {
        const chatId = "full-by-bytes"
        const big = yield* postJson("/api/agent/chat", { chatId, messages: [user("u1", "x".repeat(1500))] })
        assert.strictEqual(big.status, 200, big.text)
        const refused = yield* postJson("/api/agent/chat", { chatId, messages: [user("u2", "short")] })
        assert.strictEqual(refused.status, 409, refused.text)
        assert.strictEqual(refused.json.code, "chat_full")
        assert.strictEqual(refused.json.messages, 2)
        assert.isAtLeast(refused.json.bytes, 2000)
        assert.include(refused.json.error, "CHAT_TRANSCRIPT_MAX_BYTES")

        // Rows from before the size column (none kept) are measured when summed: still full.
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE chat_messages SET bytes = NULL WHERE chat_id LIKE ${"%" + chatId}`
        const [nulls] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM chat_messages WHERE bytes IS NULL AND chat_id LIKE ${"%" + chatId}`
        assert.strictEqual(nulls?.n, 2)
        const still = yield* postJson("/api/agent/chat", { chatId, messages: [user("u2", "short")] })
        assert.strictEqual(still.status, 409, still.text)
        assert.strictEqual(still.json.bytes, refused.json.bytes)
      }))
  })
})
