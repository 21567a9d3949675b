/**
 * The anthropic adapter over real HTTP, against FakeAnthropic (which also
 * refuses, with a 400, any body the real Messages API would refuse). What
 * every adapter must do is `AdapterConformance`'s, run here too; this file
 * keeps what is the Messages API's own (the request on the wire, its headers,
 * merging roles, tool results in one user message, no transcription).
 * `excludeTestServices`: real sockets and real deadlines need the live clock.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { ProviderNotConfigured, TranscribeVideo } from "@switchboard/domain"
import type { ProviderChatParams } from "@switchboard/domain"
import { toWireError } from "../src/ProviderWireError.ts"
import * as Anthropic from "../src/anthropic/Anthropic.ts"
import type { AnthropicSettings } from "../src/anthropic/Anthropic.ts"
import { ProviderAdapter, Transcriber } from "../src/ProviderAdapter.ts"
import * as FakeAnthropic from "../src/testing/FakeAnthropic.ts"
import { FakeAnthropicServer } from "../src/testing/FakeAnthropic.ts"
import { adapterConformance } from "./AdapterConformance.ts"
import { assistant, params, toolMessage, transcribeVideoJsonSchema, user } from "./Messages.ts"

const API_KEY = "sk-ant-test-9d2e4b6a8c0f1e3d5b7a"

const settingsFor = (baseUrl: string, overrides: Partial<AnthropicSettings> = {}): AnthropicSettings => ({
  model: "claude-fake-1",
  baseUrl,
  apiKey: Redacted.make(API_KEY),
  timeoutMs: 5_000,
  maxTokens: 2048,
  ...overrides
})

const chatWith = (settings: AnthropicSettings, chatParams: ProviderChatParams) =>
  ProviderAdapter.use((adapter) => adapter.chat(chatParams)).pipe(Effect.provide(Anthropic.layer(settings)))

adapterConformance("Anthropic over HTTP", {
  apiKey: API_KEY,
  keyPrefix: "sk-ant-",
  startFake: Effect.map(FakeAnthropic.scoped({ apiKey: API_KEY }), (fake) => ({ ...fake, chatRequests: fake.messageRequests })),
  adapter: ({ apiKey, baseUrl, maxResponseBytes, timeoutMs }) =>
    Anthropic.layer(settingsFor(baseUrl, { apiKey: Redacted.make(apiKey), timeoutMs, maxResponseBytes })),
  // `input` is a parsed JSON value: text that does not parse cannot reach the adapter.
  toolArguments: "json",
  reply: {
    text: FakeAnthropic.reply.text,
    toolCalls: (calls, text) =>
      FakeAnthropic.reply.toolUse(calls.map((call) => ({ id: call.id, name: call.name, input: JSON.parse(call.arguments) })), text),
    status: (status, message) => FakeAnthropic.reply.status(status, message),
    invalid: [
      FakeAnthropic.reply.json({ type: "message", content: "not blocks" }),
      FakeAnthropic.reply.message([{ type: "tool_use", id: "toolu_1", input: {} }])
    ],
    unfinished: {
      type: "chunked",
      status: 200,
      contentType: "text/event-stream",
      chunks: [
        `event: message_start\ndata: ${JSON.stringify({ type: "message_start", message: { usage: { input_tokens: 1, output_tokens: 0 } } })}\n\n`,
        `event: content_block_start\ndata: ${JSON.stringify({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } })}\n\n`,
        `event: content_block_delta\ndata: ${JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "half an" } })}\n\n`
      ]
    }
  },
  usage: {
    reply: FakeAnthropic.reply.message([{ type: "text", text: "counted" }], {
      input_tokens: 20,
      cache_read_input_tokens: 100,
      cache_creation_input_tokens: 0,
      output_tokens: 34
    }),
    expected: { inputTokens: 120, outputTokens: 34, cachedInputTokens: 100 }
  },
  streamFlags: { stream: true },
  // An overloaded_error event: what the API answers 529 when it has not started streaming.
  midStreamError: { reason: "Status", status: 529 },
  rejectedKeyMessage: "invalid x-api-key",
  echoedCredentials: (request) =>
    `bad request; headers ${JSON.stringify({ "x-api-key": request.headers["x-api-key"] })}; other x-api-key: sk-ant-unknown-42; key ${API_KEY}`,
  foreignSecret: "sk-ant-unknown-42"
})

const hello = params([user("hello")])

layer(FakeAnthropicServer.layer({ apiKey: API_KEY }), { excludeTestServices: true })("Anthropic over HTTP", (it) => {
  const fakeAndSettings = (overrides: Partial<AnthropicSettings> = {}) =>
    Effect.gen(function*() {
      const fake = yield* FakeAnthropicServer
      fake.reset()
      return { fake, settings: settingsFor(fake.url, overrides) }
    })

  it.effect("request shape on the wire: headers, model, max_tokens, top-level system, tools with input_schema", () =>
    Effect.gen(function*() {
      const { fake, settings } = yield* fakeAndSettings()
      fake.enqueue(FakeAnthropic.reply.text("Hi there"))
      const lookup = {
        name: "lookup",
        description: "Look something up",
        parameters: [
          { key: "query", type: "string" as const, required: true },
          { key: "limit", type: "integer" as const, required: false }
        ]
      }
      const response = yield* chatWith(settings, params([user("hello")], [TranscribeVideo, lookup], "SYSTEM PROMPT"))
      assert.deepStrictEqual(response, { content: "Hi there", usage: { inputTokens: 1, outputTokens: 1 } })

      const [request] = fake.messageRequests()
      assert.strictEqual(request?.method, "POST")
      assert.strictEqual(request?.path, "/v1/messages")
      assert.strictEqual(request?.headers["x-api-key"], API_KEY)
      assert.strictEqual(request?.headers["anthropic-version"], "2023-06-01")
      assert.match(String(request?.headers["content-type"]), /^application\/json/)
      assert.isUndefined(request?.headers.authorization)
      assert.deepStrictEqual(request?.body, {
        model: "claude-fake-1",
        max_tokens: 2048,
        system: "SYSTEM PROMPT",
        messages: [{ role: "user", content: "hello" }],
        tools: [
          {
            name: "transcribe_video",
            description: TranscribeVideo.description,
            input_schema: transcribeVideoJsonSchema
          },
          {
            name: "lookup",
            description: "Look something up",
            input_schema: {
              type: "object",
              properties: { query: { type: "string" }, limit: { type: "integer" } },
              required: ["query"],
              additionalProperties: false
            }
          }
        ]
      })
    }))

  it.effect("no tools and no system field when there are none", () =>
    Effect.gen(function*() {
      const { fake, settings } = yield* fakeAndSettings()
      const response = yield* chatWith(settings, params([user("ping")], [], ""))
      assert.strictEqual(response.content, "fake answer to: ping")
      assert.deepStrictEqual(fake.messageRequests()[0]?.body, {
        model: "claude-fake-1",
        max_tokens: 2048,
        messages: [{ role: "user", content: "ping" }]
      })
    }))

  it.effect("a full tool loop: tool_use blocks, then the results in ONE user message, is_error on the failed one", () =>
    Effect.gen(function*() {
      const { fake, settings } = yield* fakeAndSettings()
      fake.enqueue(FakeAnthropic.reply.text("Clip 1 says hello; clip 2 is missing."))
      const response = yield* chatWith(settings, params([
        user("transcribe both"),
        assistant("On it.", {
          toolCalls: [
            { id: "toolu_1", name: "transcribe_video", args: { assetId: "a1" } },
            { id: "toolu_2", name: "transcribe_video", args: { assetId: "a2" } }
          ]
        }),
        toolMessage("toolu_1", "transcribe_video", { result: "hello" }),
        toolMessage("toolu_2", "transcribe_video", { error: "no such asset" })
      ], [TranscribeVideo]))
      // The fake answers 400 to a body the API would refuse: this one went through.
      assert.strictEqual(response.content, "Clip 1 says hello; clip 2 is missing.")
      const body = fake.messageRequests()[0]?.body as { messages: Array<unknown> }
      assert.deepStrictEqual(body.messages.slice(1), [
        {
          role: "assistant",
          content: [
            { type: "text", text: "On it." },
            { type: "tool_use", id: "toolu_1", name: "transcribe_video", input: { assetId: "a1" } },
            { type: "tool_use", id: "toolu_2", name: "transcribe_video", input: { assetId: "a2" } }
          ]
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: "{\"result\":\"hello\"}" },
            { type: "tool_result", tool_use_id: "toolu_2", content: "{\"error\":\"no such asset\"}", is_error: true }
          ]
        }
      ])
    }))

  it.effect("merges consecutive same-role messages (and the API accepts the result)", () =>
    Effect.gen(function*() {
      const { fake, settings } = yield* fakeAndSettings()
      yield* chatWith(settings, params([
        user("first"),
        user("second"),
        assistant("one"),
        assistant(""),
        assistant("two"),
        user("third")
      ]))
      const body = fake.messageRequests()[0]?.body as { messages: Array<unknown> }
      assert.deepStrictEqual(body.messages, [
        { role: "user", content: [{ type: "text", text: "first" }, { type: "text", text: "second" }] },
        { role: "assistant", content: [{ type: "text", text: "one" }, { type: "text", text: "two" }] },
        { role: "user", content: "third" }
      ])
    }))

  it.effect("transcription → NotConfigured (no endpoint), without calling the API; the route makes it a 502 provider_not_configured", () =>
    Effect.gen(function*() {
      const { fake, settings } = yield* fakeAndSettings()
      const error = yield* Transcriber.use((t) =>
        t.transcribe({ data: new Uint8Array([1, 2, 3]), fileName: "a.wav", mediaType: "audio/wav" })
      ).pipe(Effect.provide(Anthropic.layer(settings)), Effect.flip)
      assert.strictEqual(error.reason, "NotConfigured")
      assert.deepStrictEqual(error.missing, [])
      assert.strictEqual(error.message, "transcription is not supported by the anthropic provider")
      assert.strictEqual(fake.requests.length, 0)

      const wire = yield* toWireError(error).pipe(Effect.flip)
      if (!(wire instanceof ProviderNotConfigured)) return assert.fail(`expected ProviderNotConfigured, got ${String(wire)}`)
      assert.strictEqual(wire.error, "LLM provider not configured: transcription is not supported by the anthropic provider")
      assert.deepStrictEqual(wire.missing, [])
    }))
})

describe("Anthropic", () => {
  layer(FakeAnthropicServer.layer(), { excludeTestServices: true })("without a required key on the fake", (it) => {
    it.effect("a request without anthropic-version would be refused: the adapter always sends it", () =>
      Effect.gen(function*() {
        const fake = yield* FakeAnthropicServer
        const response = yield* chatWith(settingsFor(fake.url), hello)
        assert.strictEqual(response.content, "fake answer to: hello")
        assert.strictEqual(fake.messageRequests()[0]?.headers["anthropic-version"], Anthropic.API_VERSION)
      }))
  })
})
