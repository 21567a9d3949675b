/**
 * The anthropic adapter over real HTTP, against FakeAnthropic (which also
 * refuses, with a 400, any body the real Messages API would refuse).
 * `excludeTestServices`: real sockets and real deadlines need the live clock.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { ProviderNotConfigured, TranscribeVideo } from "@switchboard/domain"
import type { ProviderChatParams } from "@switchboard/domain"
import { toWireError } from "../../src/chat/ChatHttp.ts"
import * as Anthropic from "../../src/llm/Anthropic.ts"
import type { AnthropicSettings } from "../../src/llm/Anthropic.ts"
import { ProviderAdapter, Transcriber } from "../../src/llm/ProviderAdapter.ts"
import type { ProviderError } from "../../src/llm/ProviderAdapter.ts"
import * as FakeAnthropic from "../support/FakeAnthropic.ts"
import { FakeAnthropicServer } from "../support/FakeAnthropic.ts"
import { assistant, params, toolMessage, user } from "./Messages.ts"

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

/** Every ProviderError message must be free of the key, whatever the provider echoed. */
const assertNoSecret = (error: ProviderError) => {
  assert.notInclude(error.message, API_KEY)
  assert.notInclude(error.message, API_KEY.slice(7))
  // Any x-api-key header value quoted in the message, known to us or not, is redacted.
  for (const [, value] of error.message.matchAll(/x-api-key["']?\s*[:=]\s*["']?([^\s"',;}]+)/gi)) {
    assert.strictEqual(value, "[REDACTED]", error.message)
  }
}

const failureOf = (settings: AnthropicSettings, chatParams: ProviderChatParams = params([user("hi")])) =>
  chatWith(settings, chatParams).pipe(
    Effect.flip,
    Effect.tap((error) => Effect.sync(() => assertNoSecret(error)))
  )

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
      assert.deepStrictEqual(response, { content: "Hi there" })

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
            input_schema: {
              type: "object",
              properties: {
                assetId: { type: "string", description: "Id of the media asset to transcribe." },
                language: { type: "string", description: "ISO-639-1 code of the spoken language, e.g. \"en\"." }
              },
              required: [],
              additionalProperties: false
            }
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

  it.effect("parses tool_use blocks: object input → args, anything else → args {} + invalidArgs", () =>
    Effect.gen(function*() {
      const { fake, settings } = yield* fakeAndSettings()
      fake.enqueue(FakeAnthropic.reply.toolUse([
        { id: "toolu_ok", name: "transcribe_video", input: { assetId: "a1" } },
        { id: "toolu_arr", name: "transcribe_video", input: ["a1"] },
        { id: "toolu_str", name: "transcribe_video", input: "{\"assetId\":\"a1\"}" }
      ], "Working on it"))
      const response = yield* chatWith(settings, params([user("transcribe")], [TranscribeVideo]))
      assert.deepStrictEqual(response, {
        content: "Working on it",
        toolCalls: [
          { id: "toolu_ok", name: "transcribe_video", args: { assetId: "a1" } },
          { id: "toolu_arr", name: "transcribe_video", args: {}, invalidArgs: "arguments must be a JSON object, got an array" },
          { id: "toolu_str", name: "transcribe_video", args: {}, invalidArgs: "arguments must be a JSON object, got a string" }
        ]
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
      const raw = fake.messageRequests()[0]?.rawBody.toString("utf8") ?? ""
      for (const leaked of ["ARTIFACT-PAYLOAD", "JOB-METADATA", "data-subagent-artifact", "metadata", "parts", "steer_job1"]) {
        assert.notInclude(raw, leaked)
      }
      assert.include(raw, "steer text")
    }))

  it.effect("4xx → Status with the status code and the API's message", () =>
    Effect.gen(function*() {
      const { fake, settings } = yield* fakeAndSettings()
      fake.enqueue(
        FakeAnthropic.reply.status(400, "messages.0.content: Field required"),
        FakeAnthropic.reply.status(429, "Number of request tokens has exceeded your rate limit")
      )
      const bad = yield* failureOf(settings)
      assert.strictEqual(bad.reason, "Status")
      assert.strictEqual(bad.status, 400)
      assert.strictEqual(bad.message, "Provider answered HTTP 400: messages.0.content: Field required")
      const limited = yield* failureOf(settings)
      assert.strictEqual(limited.reason, "Status")
      assert.strictEqual(limited.status, 429)
      assert.include(limited.message, "rate limit")
    }))

  it.effect("5xx (529 overloaded included) → Status with the status code", () =>
    Effect.gen(function*() {
      const { fake, settings } = yield* fakeAndSettings()
      fake.enqueue(
        FakeAnthropic.reply.status(500, "Internal server error"),
        FakeAnthropic.reply.status(529, "Overloaded"),
        { type: "text", status: 503, body: "upstream unavailable", contentType: "text/plain" }
      )
      for (const [status, text] of [[500, "Internal server error"], [529, "Overloaded"], [503, "upstream unavailable"]] as const) {
        const error = yield* failureOf(settings)
        assert.strictEqual(error.reason, "Status")
        assert.strictEqual(error.status, status)
        assert.include(error.message, text)
      }
    }))

  it.effect("the API key never appears in a ProviderError message, even when the provider echoes it", () =>
    Effect.gen(function*() {
      const { fake, settings } = yield* fakeAndSettings()
      // The fake requires API_KEY: send another key that we also hold secret, and it echoes that one back.
      const wrongKey = "sk-ant-wrong-0123456789abcdef"
      const rejected = yield* chatWith({ ...settings, apiKey: Redacted.make(wrongKey) }, hello).pipe(Effect.flip)
      assert.strictEqual(rejected.reason, "Status")
      assert.strictEqual(rejected.status, 401)
      assert.include(rejected.message, "invalid x-api-key")
      assert.notInclude(rejected.message, wrongKey)

      // A proxy dumping the request headers (ours, and an x-api-key we never knew) into its error.
      fake.respondWith((request) =>
        FakeAnthropic.reply.status(
          400,
          `bad request; headers ${JSON.stringify({ "x-api-key": request.headers["x-api-key"] })}; other x-api-key: sk-ant-unknown-42; key ${API_KEY}`
        )
      )
      const echoed = yield* failureOf(settings)
      assert.include(echoed.message, "[REDACTED]")
      assert.notInclude(echoed.message, "sk-ant-unknown-42")

      fake.respondWith(() => FakeAnthropic.reply.garbage(`oops ${API_KEY}`))
      const garbage = yield* failureOf(settings)
      assert.strictEqual(garbage.reason, "InvalidResponse")
    }))

  it.effect("timeout → Timeout, and the request is aborted", () =>
    Effect.gen(function*() {
      const { fake, settings } = yield* fakeAndSettings({ timeoutMs: 300 })
      fake.enqueue(FakeAnthropic.reply.hang())
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
      fake.enqueue(FakeAnthropic.reply.json({ type: "message", content: [] }, 200, 1_000))
      assert.strictEqual((yield* failureOf(settings)).reason, "Timeout")
    }))

  it.effect("garbage → InvalidResponse", () =>
    Effect.gen(function*() {
      const { fake, settings } = yield* fakeAndSettings()
      fake.enqueue(
        FakeAnthropic.reply.garbage(),
        FakeAnthropic.reply.garbage("<html>hello</html>", "text/html"),
        FakeAnthropic.reply.json({ hello: "world" }),
        FakeAnthropic.reply.json({ type: "message", content: "not blocks" }),
        FakeAnthropic.reply.message([{ type: "tool_use", id: "toolu_1", input: {} }])
      )
      for (let i = 0; i < 5; i++) {
        assert.strictEqual((yield* failureOf(settings)).reason, "InvalidResponse", `reply ${i}`)
      }
    }))

  it.effect("connection destroyed → Network", () =>
    Effect.gen(function*() {
      const { fake, settings } = yield* fakeAndSettings()
      fake.enqueue(FakeAnthropic.reply.destroy())
      assert.strictEqual((yield* failureOf(settings)).reason, "Network")
    }))

  it.effect("connection refused → Network", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(() => FakeAnthropic.closedPort())
      const error = yield* failureOf(settingsFor(`http://127.0.0.1:${port}/v1`))
      assert.strictEqual(error.reason, "Network")
    }))

  it.effect("one pool serves successive calls (keep-alive) and a trailing slash on the base URL", () =>
    Effect.gen(function*() {
      const { fake, settings } = yield* fakeAndSettings()
      const answers = yield* Effect.gen(function*() {
        const adapter = yield* ProviderAdapter
        return yield* Effect.all([adapter.chat(params([user("one")])), adapter.chat(params([user("two")]))], { concurrency: 2 })
      }).pipe(Effect.provide(Anthropic.layer({ ...settings, baseUrl: `${settings.baseUrl}/` })))
      assert.deepStrictEqual(answers.map((a) => a.content).sort(), ["fake answer to: one", "fake answer to: two"])
      assert.deepStrictEqual(fake.messageRequests().map((r) => r.path), ["/v1/messages", "/v1/messages"])
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
