/**
 * A flooding provider and oversized messages against the real server. A 17 MiB answer used to be stored; the driver then refused to read
 * its row back (over its 16 MiB `maxMessageSize`), and every later turn of the
 * chat and its transcript answered 503 `database_unavailable` for good. Now an
 * answer is read up to `LLM_MAX_RESPONSE_BYTES` and no further, a stored
 * message is bounded (`maxStoredValueBytes`), and an unreadable row is a 500,
 * not a database outage.
 */
import { assert, describe, layer } from "@effect/vitest"
import type { ChatMessage } from "@switchboard/domain"
import { maxStoredValueBytes } from "@switchboard/domain"
import { Effect, Fiber, Layer, Logger, Stream } from "effect"
import { SqlClient } from "effect/sql"
import * as ProviderConfig from "@switchboard/providers"
import { FakeOpenAiServer, makeFakeProvider, openAiReply as reply } from "@switchboard/providers/testing"
import { readEventStream, streamedText, streamInit } from "../support/EventStream.ts"
import { baseUrl, layerTestServer, postJson, request } from "../support/TestServer.ts"

const MiB = 1024 * 1024
const user = (id: string, content: string): ChatMessage => ({ id, role: "user", content, timestamp: 1 })

const withServer = (env: Record<string, string>) =>
  Layer.unwrap(Effect.gen(function*() {
    const fake = yield* FakeOpenAiServer
    return layerTestServer(ProviderConfig.layer, {
      LLM_PROVIDER: "openai-compatible",
      LLM_MODEL: "gpt-bounds",
      LLM_API_KEY: "sk-bounds-test",
      LLM_BASE_URL: fake.url,
      LLM_TIMEOUT_MS: "20000",
      ...env
    })
    // The failures these tests provoke are logged as errors on purpose: keep the output readable.
  })).pipe(Layer.provideMerge(FakeOpenAiServer.layer()), Layer.provide(Logger.layer([])))

const tooLarge = { error: "LLM provider error", code: "provider_error", reason: "too_large" }

for (const transport of ["undici", "sdk"] as const) {
  describe(`huge provider answers, openai-compatible over ${transport}`, () => {
    layer(withServer({ LLM_TRANSPORT: transport }), { excludeTestServices: true })("default bounds", (it) => {
      it.effect("a 17 MiB answer is a 502 too_large, nothing of it stored; the chat's next turn and its transcript work", () =>
        Effect.gen(function*() {
          const fake = yield* FakeOpenAiServer
          fake.reset()
          const chatId = `flood-${transport}`
          fake.enqueue(reply.text("x".repeat(17 * MiB)))
          const flooded = yield* postJson("/api/agent/chat", { chatId, messages: [user("u1", "write a lot")] })
          assert.strictEqual(flooded.status, 502)
          assert.deepStrictEqual(flooded.json, tooLarge)

          const next = yield* postJson("/api/agent/chat", { chatId, messages: [user("u2", "shorter, please")] })
          assert.strictEqual(next.status, 200, next.text)
          assert.strictEqual(next.json.content, "fake answer to: shorter, please")
          const transcript = yield* request(`/api/chats/${chatId}/messages`)
          assert.strictEqual(transcript.status, 200, transcript.text)
          assert.deepStrictEqual(
            transcript.json.messages.map((m: ChatMessage) => m.content),
            ["write a lot", "shorter, please", "fake answer to: shorter, please"]
          )
        }))

      it.effect("/healthz answers while a huge answer streams in, and the read stops long before the provider is done", () =>
        Effect.gen(function*() {
          const fake = yield* FakeOpenAiServer
          fake.reset()
          // 64 MiB, no length, paced: the whole of it would take seconds to arrive.
          const flood = reply.stream(64 * MiB, { chunkBytes: 256 * 1024, intervalMs: 5 })
          fake.enqueue(flood.reply)
          const turn = yield* postJson("/api/agent/chat", { chatId: `stream-${transport}`, messages: [user("u1", "flood me")] })
            .pipe(Effect.forkChild)
          yield* Effect.promise(() => fake.waitFor(() => flood.progress.sentBytes > 0, 10_000))
          const health = yield* request("/healthz")
          assert.strictEqual(health.status, 200)
          assert.isFalse(flood.progress.finished, "/healthz answered while the provider was still sending")

          const answered = yield* Fiber.join(turn)
          assert.strictEqual(answered.status, 502)
          assert.deepStrictEqual(answered.json, tooLarge)
          // The server went away mid-body: the rest was never sent.
          yield* Effect.promise(() => fake.waitFor((requests) => requests.at(-1)?.aborted === true, 10_000))
          assert.isFalse(flood.progress.finished)
          assert.isBelow(flood.progress.sentBytes, 64 * MiB)
        }))
    })
  })
}

describe("stored message bounds", () => {
  // The read bound raised above the stored one: the store's own bound must hold by itself.
  layer(withServer({ LLM_MAX_RESPONSE_BYTES: String(16 * MiB) }), { excludeTestServices: true })("over HTTP", (it) => {
    it.effect("an answer over what a stored message holds is a 502 too_large; the user's message is kept", () =>
      Effect.gen(function*() {
        const fake = yield* FakeOpenAiServer
        fake.reset()
        fake.enqueue(reply.text("y".repeat(maxStoredValueBytes + 1024)))
        const res = yield* postJson("/api/agent/chat", { chatId: "big-answer", messages: [user("u1", "hi")] })
        assert.strictEqual(res.status, 502)
        assert.deepStrictEqual(res.json, tooLarge)
        const transcript = yield* request("/api/chats/big-answer/messages")
        assert.strictEqual(transcript.status, 200)
        assert.deepStrictEqual(transcript.json.messages.map((m: ChatMessage) => m.id), ["u1"])
      }))

    it.effect("a request's own message over it is a 413 naming it, and nothing of the request is stored", () =>
      Effect.gen(function*() {
        const fake = yield* FakeOpenAiServer
        fake.reset()
        const res = yield* postJson("/api/agent/chat", {
          chatId: "big-question",
          messages: [user("u1", "fine"), user("u2", "q".repeat(maxStoredValueBytes))]
        })
        assert.strictEqual(res.status, 413)
        assert.strictEqual(res.json.code, "payload_too_large")
        assert.include(res.json.error, "messages[1]")
        assert.strictEqual(fake.chatRequests().length, 0)
        assert.strictEqual((yield* request("/api/chats/big-question/messages")).status, 404)
        // Without a chatId nothing is stored, so nothing is refused for its size.
        const unpersisted = yield* postJson("/api/agent/chat", { messages: [user("u2", "q".repeat(maxStoredValueBytes))] })
        assert.strictEqual(unpersisted.status, 200)
      }))

    it.effect("a request's context over it is a 413 naming it (its jobs would store it), and nothing of the request is stored", () =>
      Effect.gen(function*() {
        const fake = yield* FakeOpenAiServer
        fake.reset()
        // The default agent's context (media-editor's), and notes that make it too large to store.
        const context = { projectId: "p1", activeSceneId: null, mediaAssets: [], playbackTimeMs: 0, notes: "c".repeat(maxStoredValueBytes) }
        const res = yield* postJson("/api/agent/chat", { chatId: "big-context", messages: [user("u1", "fine")], context })
        assert.strictEqual(res.status, 413, res.text)
        assert.strictEqual(res.json.code, "payload_too_large")
        assert.include(res.json.error, "at context")
        assert.strictEqual(fake.chatRequests().length, 0)
        assert.strictEqual((yield* request("/api/chats/big-context/messages")).status, 404)
        const unpersisted = yield* postJson("/api/agent/chat", { messages: [user("u1", "fine")], context })
        assert.strictEqual(unpersisted.status, 200, unpersisted.text)
      }))

    it.effect("a row stored before the bounds, too large to read back, is a 500 internal_error, never 503 database_unavailable", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const huge = JSON.stringify(user("old", "z".repeat(17 * MiB)))
        yield* sql`INSERT INTO chats (id) VALUES ('legacy')`
        yield* sql`INSERT INTO chat_messages (chat_id, id, role, message) VALUES ('legacy', 'old', 'user', ${huge}::jsonb)`
        const res = yield* request("/api/chats/legacy/messages")
        assert.strictEqual(res.status, 500)
        assert.strictEqual(res.json.code, "internal_error")
        assert.isNull(res.headers.get("retry-after"))
        // The database itself is fine: the next request is served.
        const other = yield* postJson("/api/agent/chat", { chatId: "after-legacy", messages: [user("u1", "still there?")] })
        assert.strictEqual(other.status, 200, other.text)
      }))
  })
})

describe("a streamed answer's size", () => {
  const fake = makeFakeProvider()
  layer(layerTestServer(fake.layer), { excludeTestServices: true })("counted in bytes", (it) => {
    it.effect("an answer whose characters would fit but whose UTF-8 bytes do not ends once it outgrows a stored message", () =>
      Effect.gen(function*() {
        const piece = "é".repeat(64 * 1024) // 128 KiB of UTF-8
        const pieces = Math.ceil(maxStoredValueBytes / Buffer.byteLength(piece)) + 1
        // Half as many characters as a stored message holds bytes; then a provider that never ends.
        assert.isBelow(pieces * piece.length, maxStoredValueBytes)
        fake.streamWith(() =>
          Stream.concat(
            Stream.fromIterable(Array.from({ length: pieces }, () => ({ type: "text-delta" as const, delta: piece }))),
            Stream.never
          )
        )
        const read = yield* readEventStream(`${yield* baseUrl}/api/agent/chat`, streamInit({ chatId: "utf8-answer", messages: [user("u1", "hi")] }))
        assert.strictEqual(read.status, 200)
        assert.strictEqual(read.chunks.at(-1)?.type, "error")
        assert.isAtMost(Buffer.byteLength(streamedText(read.chunks)), maxStoredValueBytes, "no text past the bound was sent")
        const transcript = yield* request("/api/chats/utf8-answer/messages")
        assert.deepStrictEqual(transcript.json.messages.map((m: ChatMessage) => m.id), ["u1"])
      }).pipe(Effect.ensuring(Effect.sync(() => fake.streamWith(undefined)))))
  })
})
