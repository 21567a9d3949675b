/**
 * The openai-compatible adapter over real HTTP, against FakeOpenAi, once per
 * transport: both must put the same bytes on the wire and map failures alike.
 * `excludeTestServices`: real sockets and real deadlines need the live clock.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { TranscribeVideo } from "@switchboard/domain"
import type { ProviderChatParams } from "@switchboard/domain"
import type { TransportKind } from "../../src/llm/ChatCompletionsTransport.ts"
import * as OpenAiCompatible from "../../src/llm/OpenAiCompatible.ts"
import type { OpenAiCompatibleSettings } from "../../src/llm/OpenAiCompatible.ts"
import { ProviderAdapter, Transcriber } from "../../src/llm/ProviderAdapter.ts"
import type { ProviderError, TranscriptionInput } from "../../src/llm/ProviderAdapter.ts"
import * as FakeOpenAi from "../support/FakeOpenAi.ts"
import { FakeOpenAiServer } from "../support/FakeOpenAi.ts"
import { assistant, params, toolMessage, user } from "./Messages.ts"

const API_KEY = "sk-test-7f3a9c1e5b2d4f6a8c0e"

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

/** Every ProviderError message must be free of the key, whatever the provider echoed. */
const assertNoSecret = (error: ProviderError) => {
  assert.notInclude(error.message, API_KEY)
  assert.notInclude(error.message, API_KEY.slice(3))
  assert.notMatch(error.message, /Bearer\s+(?!\[REDACTED\])/)
}

const failureOf = (settings: OpenAiCompatibleSettings, chatParams: ProviderChatParams = params([user("hi")])) =>
  chatWith(settings, chatParams).pipe(
    Effect.flip,
    Effect.tap((error) => Effect.sync(() => assertNoSecret(error)))
  )

const hello = params([user("hello")])

for (const transport of ["undici", "sdk"] as const) {
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
            parameters: {
              type: "object",
              properties: {
                assetId: { type: "string", description: "Id of the media asset to transcribe." },
                language: { type: "string", description: "ISO-639-1 code of the spoken language, e.g. \"en\"." }
              },
              required: [],
              additionalProperties: false
            }
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
        assert.deepStrictEqual(response, { content: "Hi there" })

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

    it.effect("never puts data parts or metadata on the wire", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings()
        yield* chatWith(settings, params([
          user("steer text", {
            id: "steer_job1",
            parts: [
              { type: "text", text: "steer text" },
              { type: "data-subagent-artifact", data: { kind: "research", result: "ARTIFACT-PAYLOAD" } }
            ],
            metadata: { subagentResult: { jobId: "JOB-METADATA", kind: "research", toolCallId: "call_x" } }
          })
        ]))
        const raw = fake.chatRequests()[0]?.rawBody.toString("utf8") ?? ""
        for (const leaked of ["ARTIFACT-PAYLOAD", "JOB-METADATA", "data-subagent-artifact", "metadata", "parts", "steer_job1"]) {
          assert.notInclude(raw, leaked)
        }
        assert.include(raw, "steer text")
      }))

    it.effect("parses tool calls: valid, malformed and non-object arguments", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings()
        fake.enqueue(FakeOpenAi.reply.toolCalls([
          { id: "call_ok", name: "transcribe_video", arguments: "{\"assetId\":\"a1\"}" },
          { id: "call_bad", name: "transcribe_video", arguments: "{\"assetId\": \"a1\"" },
          { id: "call_arr", name: "transcribe_video", arguments: "[\"a1\"]" },
          { id: "call_str", name: "transcribe_video", arguments: "\"a1\"" },
          { id: "call_empty", name: "transcribe_video", arguments: "" }
        ], "Working on it"))
        const response = yield* chatWith(settings, params([user("transcribe")], [TranscribeVideo]))
        assert.strictEqual(response.content, "Working on it")
        const calls = response.toolCalls ?? []
        assert.deepStrictEqual(calls.map((c) => c.id), ["call_ok", "call_bad", "call_arr", "call_str", "call_empty"])
        assert.deepStrictEqual(calls[0], { id: "call_ok", name: "transcribe_video", args: { assetId: "a1" } })
        assert.deepStrictEqual(calls[1]?.args, {})
        assert.match(calls[1]?.invalidArgs ?? "", /not valid JSON/)
        assert.deepStrictEqual(calls[2], {
          id: "call_arr",
          name: "transcribe_video",
          args: {},
          invalidArgs: "arguments must be a JSON object, got an array"
        })
        assert.strictEqual(calls[3]?.invalidArgs, "arguments must be a JSON object, got a string")
        assert.deepStrictEqual(calls[4], { id: "call_empty", name: "transcribe_video", args: {} })
      }))

    it.effect("4xx → Status with the status code", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings()
        fake.enqueue(FakeOpenAi.reply.status(400, "messages: bad request"), FakeOpenAi.reply.status(429, "rate limited"))
        const bad = yield* failureOf(settings)
        assert.strictEqual(bad.reason, "Status")
        assert.strictEqual(bad.status, 400)
        assert.include(bad.message, "messages: bad request")
        const limited = yield* failureOf(settings)
        assert.strictEqual(limited.reason, "Status")
        assert.strictEqual(limited.status, 429)
      }))

    it.effect("5xx → Status with the status code", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings()
        fake.enqueue(
          FakeOpenAi.reply.status(500),
          { type: "text", status: 503, body: "upstream unavailable", contentType: "text/plain" }
        )
        const internal = yield* failureOf(settings)
        assert.strictEqual(internal.reason, "Status")
        assert.strictEqual(internal.status, 500)
        const unavailable = yield* failureOf(settings)
        assert.strictEqual(unavailable.reason, "Status")
        assert.strictEqual(unavailable.status, 503)
        assert.include(unavailable.message, "upstream unavailable")
      }))

    it.effect("the API key never appears in a ProviderError message, even when the provider echoes it", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings()
        // The fake requires API_KEY: send another key that we also hold secret, and it echoes that one back.
        const wrongKey = "sk-wrong-0123456789abcdef"
        const rejected = yield* chatWith({ ...settings, apiKey: Redacted.make(wrongKey) }, hello).pipe(Effect.flip)
        assert.strictEqual(rejected.reason, "Status")
        assert.strictEqual(rejected.status, 401)
        assert.include(rejected.message, "Incorrect API key provided")
        assert.notInclude(rejected.message, wrongKey)

        // A proxy dumping the request headers and body into its error.
        fake.respondWith((request) =>
          FakeOpenAi.reply.json({ error: { message: `bad request; authorization=${request.headers.authorization}; key ${API_KEY}` } }, 400)
        )
        const echoed = yield* failureOf(settings)
        assert.include(echoed.message, "[REDACTED]")
        assert.notInclude(echoed.message, API_KEY)

        fake.respondWith(() => FakeOpenAi.reply.garbage(`oops ${API_KEY}`))
        const garbage = yield* failureOf(settings)
        assert.strictEqual(garbage.reason, "InvalidResponse")
      }))

    it.effect("timeout → Timeout, and the request is aborted", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings({ timeoutMs: 300 })
        fake.enqueue(FakeOpenAi.reply.hang())
        const started = Date.now()
        const error = yield* failureOf(settings)
        assert.strictEqual(error.reason, "Timeout")
        assert.include(error.message, "300 ms")
        assert.isBelow(Date.now() - started, 3_000)
        yield* Effect.promise(() => fake.waitFor((requests) => requests[0]?.aborted === true))
      }))

    it.effect("an answer slower than the timeout → Timeout", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings({ timeoutMs: 200 })
        fake.enqueue(FakeOpenAi.reply.json({ choices: [] }, 200, 1_000))
        assert.strictEqual((yield* failureOf(settings)).reason, "Timeout")
      }))

    it.effect("garbage → InvalidResponse", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings()
        fake.enqueue(
          FakeOpenAi.reply.garbage(),
          FakeOpenAi.reply.garbage("<html>hello</html>", "text/html"),
          FakeOpenAi.reply.json({ hello: "world" }),
          FakeOpenAi.reply.json({ choices: [{ index: 0 }] })
        )
        for (let i = 0; i < 4; i++) {
          assert.strictEqual((yield* failureOf(settings)).reason, "InvalidResponse", `reply ${i}`)
        }
      }))

    it.effect("connection destroyed → Network", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings()
        fake.enqueue(FakeOpenAi.reply.destroy())
        assert.strictEqual((yield* failureOf(settings)).reason, "Network")
      }))

    it.effect("connection refused → Network", () =>
      Effect.gen(function*() {
        const port = yield* Effect.promise(() => FakeOpenAi.closedPort())
        const error = yield* failureOf(settingsFor(`http://127.0.0.1:${port}/v1`, transport))
        assert.strictEqual(error.reason, "Network")
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
        assertNoSecret(tooLarge)
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
