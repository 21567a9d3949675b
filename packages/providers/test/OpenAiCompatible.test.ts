/**
 * The openai-compatible adapter over real HTTP, against FakeOpenAi, once per
 * transport: both must put the same bytes on the wire and map failures alike.
 * What every adapter must do is `AdapterConformance`'s, run here for each
 * transport; this file keeps what is the Chat Completions API's own (the
 * request on the wire, the bearer token, transcription).
 * `excludeTestServices`: real sockets and real deadlines need the live clock.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { TranscribeVideo } from "@switchboard/domain"
import type { ProviderChatParams } from "@switchboard/domain"
import type { TransportKind } from "../src/openai/ChatCompletionsTransport.ts"
import * as OpenAiCompatible from "../src/openai/OpenAiCompatible.ts"
import type { OpenAiCompatibleSettings } from "../src/openai/OpenAiCompatible.ts"
import { ProviderAdapter, Transcriber } from "../src/ProviderAdapter.ts"
import type { TranscriptionInput } from "../src/ProviderAdapter.ts"
import * as FakeOpenAi from "../src/testing/FakeOpenAi.ts"
import { FakeOpenAiServer } from "../src/testing/FakeOpenAi.ts"
import { adapterConformance, assertNoSecret } from "./AdapterConformance.ts"
import type { AdapterHarness } from "./AdapterConformance.ts"
import { assistant, params, toolMessage, transcribeVideoJsonSchema, user } from "./Messages.ts"

const API_KEY = "sk-test-7f3a9c1e5b2d4f6a8c0e"
const KEY = { apiKey: API_KEY, keyPrefix: "sk-" }

const settingsFor = (baseUrl: string, transport: TransportKind, overrides: Partial<OpenAiCompatibleSettings> = {}): OpenAiCompatibleSettings => ({
  model: "gpt-fake-1",
  baseUrl,
  apiKey: Redacted.make(API_KEY),
  timeoutMs: 5_000,
  transport,
  transcriptionModel: "whisper-fake",
  ...overrides
})

const chatWith = (settings: OpenAiCompatibleSettings, chatParams: ProviderChatParams) =>
  ProviderAdapter.use((adapter) => adapter.chat(chatParams)).pipe(Effect.provide(OpenAiCompatible.layer(settings)))

const transcribeWith = (settings: OpenAiCompatibleSettings, input: TranscriptionInput) =>
  Transcriber.use((transcriber) => transcriber.transcribe(input)).pipe(Effect.provide(OpenAiCompatible.layer(settings)))

const harnessFor = (transport: TransportKind): AdapterHarness => ({
  ...KEY,
  startFake: FakeOpenAi.scoped({ apiKey: API_KEY }),
  adapter: ({ apiKey, baseUrl, maxResponseBytes, timeoutMs }) =>
    OpenAiCompatible.layer(settingsFor(baseUrl, transport, { apiKey: Redacted.make(apiKey), timeoutMs, maxResponseBytes })),
  toolArguments: "text",
  reply: {
    text: FakeOpenAi.reply.text,
    toolCalls: FakeOpenAi.reply.toolCalls,
    status: FakeOpenAi.reply.status,
    invalid: [FakeOpenAi.reply.json({ choices: [{ index: 0 }] })],
    unfinished: {
      type: "chunked",
      status: 200,
      contentType: "text/event-stream",
      chunks: [`data: ${JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "half an" }, finish_reason: null }] })}\n\n`]
    }
  },
  usage: {
    reply: FakeOpenAi.reply.completion({ content: "counted" }, {
      prompt_tokens: 120,
      completion_tokens: 34,
      total_tokens: 154,
      prompt_tokens_details: { cached_tokens: 100 }
    }),
    expected: { inputTokens: 120, outputTokens: 34, cachedInputTokens: 100 }
  },
  streamFlags: { stream: true, stream_options: { include_usage: true } },
  // OpenAI's error chunk carries no HTTP status.
  midStreamError: { reason: "InvalidResponse" },
  rejectedKeyMessage: "Incorrect API key provided",
  echoedCredentials: (request) =>
    `bad request; authorization=${request.headers.authorization}; proxy Authorization: Bearer sk-proxy-unknown-42; key ${API_KEY}`,
  foreignSecret: "sk-proxy-unknown-42"
})

const hello = params([user("hello")])

for (const transport of ["undici", "sdk"] as const) {
  adapterConformance(`OpenAiCompatible over ${transport}`, harnessFor(transport))

  layer(FakeOpenAiServer.layer({ apiKey: API_KEY }), { excludeTestServices: true })(`OpenAiCompatible over ${transport}`, (it) => {
    const fakeAndSettings = (overrides: Partial<OpenAiCompatibleSettings> = {}) =>
      Effect.gen(function*() {
        const fake = yield* FakeOpenAiServer
        fake.reset()
        return { fake, settings: settingsFor(fake.url, transport, overrides) }
      })

    it.effect("Adapter translates tool schemas to wire format", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings()
        yield* chatWith(settings, params([user("transcribe it")], [TranscribeVideo]))
        const body = fake.chatRequests()[0]?.body as { tools: unknown }
        assert.deepStrictEqual(body.tools, [{
          type: "function",
          function: {
            name: "transcribe_video",
            description: TranscribeVideo.description,
            parameters: transcribeVideoJsonSchema
          }
        }])
      }))

    it.effect("marks required parameters in the JSON Schema on the wire", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings()
        yield* chatWith(settings, params([user("x")], [{
          name: "lookup",
          description: "Look something up",
          parameters: [
            { key: "query", type: "string", required: true },
            { key: "limit", type: "integer", required: false },
            { key: "filters", type: "array", required: true }
          ]
        }]))
        const body = fake.chatRequests()[0]?.body as { tools: Array<{ function: { parameters: Record<string, unknown> } }> }
        assert.deepStrictEqual(body.tools[0]?.function.parameters, {
          type: "object",
          properties: { query: { type: "string" }, limit: { type: "integer" }, filters: { type: "array" } },
          required: ["query", "filters"],
          additionalProperties: false
        })
      }))

    it.effect("sends the model, the key as a bearer token, the system prompt first, and no tools when none are offered", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings()
        fake.enqueue(FakeOpenAi.reply.text("Hi there"))
        const response = yield* chatWith(settings, params([user("hello")], [], "SYSTEM PROMPT"))
        assert.deepStrictEqual(response, { content: "Hi there", usage: { inputTokens: 1, outputTokens: 1 } })

        const [request] = fake.chatRequests()
        assert.strictEqual(request?.method, "POST")
        assert.strictEqual(request?.path, "/v1/chat/completions")
        assert.strictEqual(request?.headers.authorization, `Bearer ${API_KEY}`)
        assert.match(String(request?.headers["content-type"]), /^application\/json/)
        assert.deepStrictEqual(request?.body, {
          model: "gpt-fake-1",
          messages: [{ role: "system", content: "SYSTEM PROMPT" }, { role: "user", content: "hello" }]
        })
      }))

    it.effect("sends assistant tool calls and tool results with their tool_call_id", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings()
        yield* chatWith(settings, params([
          user("transcribe"),
          assistant("", { toolCalls: [{ id: "call_9", name: "transcribe_video", args: { assetId: "a1" } }] }),
          toolMessage("call_9", "transcribe_video", { result: "hello world" })
        ], [TranscribeVideo]))
        const body = fake.chatRequests()[0]?.body as { messages: Array<unknown> }
        assert.deepStrictEqual(body.messages.slice(2), [
          {
            role: "assistant",
            content: null,
            tool_calls: [{ id: "call_9", type: "function", function: { name: "transcribe_video", arguments: "{\"assetId\":\"a1\"}" } }]
          },
          { role: "tool", tool_call_id: "call_9", content: "{\"result\":\"hello world\"}" }
        ])
      }))

    it.effect("transcription round trip", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings()
        const data = new Uint8Array(1234).fill(7)
        const text = yield* transcribeWith(settings, { data, fileName: "clip.mp4", mediaType: "video/mp4", language: "en" })
        assert.strictEqual(text, "fake transcription of clip.mp4 (1234 bytes)")

        const [request] = fake.transcriptionRequests()
        assert.strictEqual(request?.method, "POST")
        assert.strictEqual(request?.headers.authorization, `Bearer ${API_KEY}`)
        assert.deepStrictEqual(request?.upload, {
          fileName: "clip.mp4",
          size: 1234,
          mediaType: "video/mp4",
          fields: { model: "whisper-fake", language: "en" }
        })
      }))

    it.effect("transcription failures map like chat failures", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings()
        fake.enqueueTranscription(FakeOpenAi.reply.status(413, "file too large"), FakeOpenAi.reply.json({ nope: 1 }))
        const input = { data: new Uint8Array([1, 2, 3]), fileName: "a.wav", mediaType: "audio/wav" }
        const tooLarge = yield* transcribeWith(settings, input).pipe(Effect.flip)
        assert.strictEqual(tooLarge.reason, "Status")
        assert.strictEqual(tooLarge.status, 413)
        assertNoSecret(tooLarge, KEY)
        assert.strictEqual((yield* transcribeWith(settings, input).pipe(Effect.flip)).reason, "InvalidResponse")
        assert.isUndefined(fake.transcriptionRequests()[0]?.upload?.fields["language"])
      }))
  })
}

describe("OpenAiCompatible", () => {
  // A cheap guard that the loop above really covers both implementations.
  layer(FakeOpenAiServer.layer(), { excludeTestServices: true })("transport selection", (it) => {
    it.effect("each settings.transport reaches the server", () =>
      Effect.gen(function*() {
        const fake = yield* FakeOpenAiServer
        for (const transport of ["undici", "sdk"] as const) {
          const response = yield* chatWith(settingsFor(fake.url, transport), hello)
          assert.strictEqual(response.content, "fake answer to: hello")
        }
        assert.strictEqual(fake.chatRequests().length, 2)
        assert.match(String(fake.chatRequests()[1]?.headers["user-agent"]), /OpenAI/i)
      }))
  })
})
