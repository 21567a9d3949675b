/**
 * Streamed turns through the real adapters, over HTTP to the provider fakes
 * (openai-compatible: Chat Completions SSE; anthropic: Messages SSE): text
 * in several deltas equal to the stored answer, a client tool call with its
 * argument deltas, the usage in `finish`, and a stream the provider cuts — an
 * `error` chunk, nothing of the answer stored.
 */
import { assert, describe, layer } from "@effect/vitest"
import type { ChatMessage, UiChunk } from "@switchboard/domain"
import { Effect, Fiber, Layer, Logger } from "effect"
import * as ProviderConfig from "@switchboard/providers"
import { anthropicReply, FakeAnthropicServer, FakeOpenAiServer, openAiReply } from "@switchboard/providers/testing"
import type { FakeReply, FakeStreamOptions, RecordedRequest } from "@switchboard/providers/testing"
import { readEventStream, streamedText, streamInit } from "../support/EventStream.ts"
import { eventually, transcriptOf } from "../support/JobsHelpers.ts"
import { backend } from "../support/TestDatabase.ts"
import { baseUrl, layerTestServer, postJson } from "../support/TestServer.ts"

const user = (id: string, content: string): ChatMessage => ({ id, role: "user", content, timestamp: 1 })

const env = (provider: string, url: string) => ({ LLM_PROVIDER: provider, LLM_MODEL: "wire-model", LLM_API_KEY: "sk-wire", LLM_BASE_URL: url })

interface Fake {
  readonly enqueue: (...replies: ReadonlyArray<FakeReply>) => void
  readonly streamWith: (options: FakeStreamOptions) => void
  readonly chatRequests: () => ReadonlyArray<RecordedRequest>
}

interface Wire {
  readonly name: string
  readonly server: Layer.Layer<any, any, never>
  readonly fake: Effect.Effect<Fake, never, any>
  readonly text: (text: string) => FakeReply
  readonly call: (id: string, name: string, args: object) => FakeReply
}

const wires: ReadonlyArray<Wire> = [
  {
    name: "openai-compatible",
    server: Layer.unwrap(FakeOpenAiServer.use((fake) => Effect.succeed(layerTestServer(ProviderConfig.layer, env("openai-compatible", fake.url))))).pipe(
      Layer.provideMerge(FakeOpenAiServer.layer()),
      Layer.provide(Logger.layer([]))
    ),
    fake: FakeOpenAiServer.use(Effect.succeed),
    text: openAiReply.text,
    call: (id, name, args) => openAiReply.toolCalls([{ id, name, arguments: JSON.stringify(args) }])
  },
  {
    name: "anthropic",
    server: Layer.unwrap(FakeAnthropicServer.use((fake) => Effect.succeed(layerTestServer(ProviderConfig.layer, env("anthropic", fake.url))))).pipe(
      Layer.provideMerge(FakeAnthropicServer.layer()),
      Layer.provide(Logger.layer([]))
    ),
    fake: FakeAnthropicServer.use((fake) => Effect.succeed({ enqueue: fake.enqueue, streamWith: fake.streamWith, chatRequests: () => fake.messageRequests() })),
    text: anthropicReply.text,
    call: (id, name, args) => anthropicReply.toolUse([{ id, name, input: args }])
  }
]

for (const wire of wires) {
  describe(`streamed turns over ${wire.name} (${backend})`, () => {
    layer(wire.server, { excludeTestServices: true })("against the fake", (it) => {
      it.effect("text in several deltas, equal to the stored answer; usage in finish", () =>
        Effect.gen(function*() {
          const fake = yield* wire.fake
          fake.streamWith({ textDeltas: 6 })
          fake.enqueue(wire.text("The quick brown fox jumps over the lazy dog"))
          const base = yield* baseUrl
          const read = yield* readEventStream(`${base}/api/agent/chat`, streamInit({ chatId: `${wire.name}-text`, messages: [user("u1", "hi")] }))
          assert.strictEqual(read.status, 200)
          assert.isAtLeast(read.chunks.filter((c) => c.type === "text-delta").length, 6)
          assert.strictEqual(streamedText(read.chunks), "The quick brown fox jumps over the lazy dog")
          const finish = read.chunks[read.chunks.length - 1] as Extract<UiChunk, { type: "finish" }>
          assert.strictEqual(finish.type, "finish")
          assert.isDefined(finish.messageMetadata?.usage)
          assert.isAbove(finish.messageMetadata!.usage!.outputTokens, 0)
          const stored = (yield* transcriptOf(`${wire.name}-text`)).filter((m) => m.role === "assistant")
          assert.deepStrictEqual(stored.map((m) => m.content), ["The quick brown fox jumps over the lazy dog"])
          assert.strictEqual((fake.chatRequests().at(-1)!.body as { stream?: boolean }).stream, true)
        }))

      it.effect("a client tool call streams its argument deltas, then its parsed input", () =>
        Effect.gen(function*() {
          const fake = yield* wire.fake
          fake.streamWith({ argumentDeltas: 3 })
          fake.enqueue(wire.call("call_w1", "transcribe_video", { assetId: "clip-1", language: "en" }))
          const base = yield* baseUrl
          const read = yield* readEventStream(`${base}/api/agent/chat`, streamInit({ chatId: `${wire.name}-tool`, messages: [user("u1", "transcribe")] }))
          const deltas = read.chunks.filter((c): c is Extract<UiChunk, { type: "tool-input-delta" }> => c.type === "tool-input-delta")
          assert.isAtLeast(deltas.length, 2)
          assert.deepStrictEqual(JSON.parse(deltas.map((d) => d.inputTextDelta).join("")), { assetId: "clip-1", language: "en" })
          const available = read.chunks.find((c) => c.type === "tool-input-available")
          assert.deepStrictEqual(available, {
            type: "tool-input-available",
            toolCallId: "call_w1",
            toolName: "transcribe_video",
            input: { assetId: "clip-1", language: "en" }
          })
          const stored = (yield* transcriptOf(`${wire.name}-tool`)).filter((m) => m.role === "assistant")
          assert.deepStrictEqual(stored[0]!.toolCalls, [{ id: "call_w1", name: "transcribe_video", args: { assetId: "clip-1", language: "en" } }])
        }))

      it.effect("stop mid-stream: the provider sees its connection closed; the partial answer is stored, stopped", () =>
        Effect.gen(function*() {
          const fake = yield* wire.fake
          fake.streamWith({ textDeltas: 40, intervalMs: 40 })
          fake.enqueue(wire.text(Array.from({ length: 40 }, (_, i) => `w${i}`).join(" ")))
          const base = yield* baseUrl
          const chatId = `${wire.name}-stop`
          const reading = yield* readEventStream(`${base}/api/agent/chat`, streamInit({ chatId, messages: [user("u1", "go")] })).pipe(Effect.forkChild)
          yield* eventually(
            readEventStream(`${base}/api/chats/${chatId}/stream`, { method: "GET" }, (_, all) => all.filter((c) => c.type === "text-delta").length >= 3),
            (r) => r.status === 200,
            "a few deltas streamed"
          )
          const stop = yield* postJson(`/api/chats/${chatId}/stop`, {})
          assert.deepStrictEqual(stop.json, { stopped: true })
          const read = yield* Fiber.join(reading)
          assert.strictEqual((read.chunks.at(-1) as Extract<UiChunk, { type: "finish" }>).messageMetadata?.stopped, true)
          yield* eventually(Effect.sync(() => fake.chatRequests().at(-1)!.aborted), (aborted) => aborted, "the provider's connection closed")
          const stored = (yield* transcriptOf(chatId)).filter((m) => m.role === "assistant")
          assert.strictEqual(stored.length, 1)
          assert.deepStrictEqual(stored[0]!.metadata, { stopped: true })
          assert.strictEqual(stored[0]!.content, streamedText(read.chunks))
          fake.streamWith({})
        }))

      it.effect("a stream the provider cuts: an error chunk, nothing of the answer stored", () =>
        Effect.gen(function*() {
          const fake = yield* wire.fake
          fake.streamWith({ textDeltas: 8, cutAfter: 3 })
          fake.enqueue(wire.text("one two three four five six seven eight"))
          const base = yield* baseUrl
          const read = yield* readEventStream(`${base}/api/agent/chat`, streamInit({ chatId: `${wire.name}-cut`, messages: [user("u1", "hi")] }))
          assert.strictEqual(read.status, 200)
          assert.deepStrictEqual(read.chunks[read.chunks.length - 1], { type: "error", errorText: "LLM provider error" })
          assert.isTrue(read.done)
          const transcript = yield* transcriptOf(`${wire.name}-cut`)
          assert.deepStrictEqual(transcript.map((m) => m.id), ["u1"], "the user's message (write-ahead), no half answer")
          fake.streamWith({})
        }))
    })
  })
}
