/**
 * What every provider adapter must do, whatever API it speaks, over real HTTP
 * against the provider's fake: keep data parts and metadata off the wire; map
 * error statuses, deadlines, unreadable answers and broken connections to the
 * same `ProviderError` reasons; keep the API key out of every error message;
 * read tool call arguments into `args`, or `args: {}` and `invalidArgs`.
 *
 * `adapterConformance(name, harness)` registers these tests once per adapter
 * (and per transport): the harness says how to start the provider's fake,
 * build the adapter and phrase the provider's answers; every assertion is the
 * suite's. Each adapter's own test file keeps only what is its API's own (the
 * request shape on the wire, headers, merging rules, transcription, …).
 * `excludeTestServices`: real sockets and real deadlines need the live clock.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import type { Scope } from "effect"
import { TranscribeVideo } from "@switchboard/domain"
import type { ProviderChatParams, ToolCall } from "@switchboard/domain"
import { ProviderAdapter, publicReason } from "../src/ProviderAdapter.ts"
import { DEFAULT_MAX_RESPONSE_BYTES } from "../src/ResponseLimit.ts"
import type { ProviderError } from "../src/ProviderAdapter.ts"
import { baseReply, closedPort } from "../src/testing/FakeHttp.ts"
import type { FakeHandler, FakeReply, RecordedRequest } from "../src/testing/FakeHttp.ts"
import { params, user } from "./Messages.ts"

/** The provider's fake as the suite drives it (`FakeOpenAi` is one as it stands). */
export interface ConformanceFake {
  readonly url: string
  /** Only the requests to the chat endpoint's exact path (`/v1/chat/completions`, `/v1/messages`), in arrival order. */
  chatRequests(): ReadonlyArray<RecordedRequest>
  /** Replies for the next chat requests, first in first out. */
  enqueue(...replies: ReadonlyArray<FakeReply>): void
  /** The chat reply when the queue is empty. */
  respondWith(handler: FakeHandler): void
  waitFor(predicate: (requests: ReadonlyArray<RecordedRequest>) => boolean, timeoutMs?: number): Promise<void>
  /** Forget recorded requests, queued replies and the `respondWith` handler. */
  reset(): void
}

/** What the suite varies between calls; the harness fills in the rest of the provider's settings. */
export interface AdapterSettings {
  readonly baseUrl: string
  readonly apiKey: string
  readonly timeoutMs: number
  readonly maxResponseBytes: number
}

/** A tool call in the provider's answer. */
export interface FakeToolCall {
  readonly id: string
  readonly name: string
  /** The arguments as the JSON text the model wrote (it need not parse). */
  readonly arguments: string
}

export interface AdapterHarness {
  /** The key the fake requires, in the provider's format. */
  readonly apiKey: string
  /** The vendor prefix of that format (`sk-`, `sk-ant-`): no message may hold even the rest of a key. */
  readonly keyPrefix: string
  /** The fake, requiring `apiKey` (a 401 echoing any other key), for the lifetime of the scope. */
  readonly startFake: Effect.Effect<ConformanceFake, never, Scope.Scope>
  /** The adapter under test. */
  readonly adapter: (settings: AdapterSettings) => Layer.Layer<ProviderAdapter>
  /**
   * How the wire carries tool arguments: `"text"`, the JSON text as written
   * (OpenAI's `arguments`: it may be malformed or empty), or `"json"`, an
   * already-parsed value (Anthropic's `input`: only the cases whose text parses apply).
   */
  readonly toolArguments: "text" | "json"
  readonly reply: {
    /** A complete answer with this text. */
    readonly text: (content: string) => FakeReply
    /** A complete answer: `text`, then these tool calls. */
    readonly toolCalls: (calls: ReadonlyArray<FakeToolCall>, text: string) => FakeReply
    /** An error status with the API's error body carrying `message`. */
    readonly status: (status: number, message: string) => FakeReply
    /** 2xx JSON bodies that are not an answer of this API (beyond the suite's own non-JSON and `{ hello: "world" }`). */
    readonly invalid: ReadonlyArray<FakeReply>
  }
  /** The part of the fake's 401 message that explains it (the message also echoes the key sent). */
  readonly rejectedKeyMessage: string
  /** A proxy's error text that dumps the request's credentials, the key, and `foreignSecret` in the provider's credential syntax. */
  readonly echoedCredentials: (request: RecordedRequest) => string
  /** A credential unknown to the adapter: only its syntax (`Bearer …`, `x-api-key: …`) can get it redacted. */
  readonly foreignSecret: string
}

/** Every ProviderError message must be free of the key (whole or without its prefix) and of any credential value. */
export const assertNoSecret = (error: ProviderError, key: Pick<AdapterHarness, "apiKey" | "keyPrefix">) => {
  assert.notInclude(error.message, key.apiKey)
  assert.notInclude(error.message, key.apiKey.slice(key.keyPrefix.length))
  assert.notMatch(error.message, /Bearer\s+(?!\[REDACTED\])/)
  // Any x-api-key header value quoted in the message, known to us or not, is redacted.
  for (const [, value] of error.message.matchAll(/x-api-key["']?\s*[:=]\s*["']?([^\s"',;}]+)/gi)) {
    assert.strictEqual(value, "[REDACTED]", error.message)
  }
}

class Fake extends Context.Service<Fake, ConformanceFake>()("switchboard/test/AdapterConformance/Fake") {}

/** One tool call case: what the model wrote, and the `ToolCall` the adapter must make of it. */
interface ToolCallCase {
  readonly call: FakeToolCall
  /** Only where arguments travel as text. */
  readonly textOnly?: true
  readonly expected: (actual: ToolCall | undefined) => ToolCall
}

const exactly = (expected: ToolCall) => () => expected

const toolCallCases: ReadonlyArray<ToolCallCase> = [
  {
    call: { id: "call_ok", name: "transcribe_video", arguments: "{\"assetId\":\"a1\"}" },
    expected: exactly({ id: "call_ok", name: "transcribe_video", args: { assetId: "a1" } })
  },
  {
    call: { id: "call_bad", name: "transcribe_video", arguments: "{\"assetId\": \"a1\"" },
    textOnly: true,
    expected: (actual) => {
      assert.match(actual?.invalidArgs ?? "", /not valid JSON/)
      return { id: "call_bad", name: "transcribe_video", args: {}, invalidArgs: actual?.invalidArgs ?? "" }
    }
  },
  {
    call: { id: "call_arr", name: "transcribe_video", arguments: "[\"a1\"]" },
    expected: exactly({ id: "call_arr", name: "transcribe_video", args: {}, invalidArgs: "arguments must be a JSON object, got an array" })
  },
  {
    call: { id: "call_str", name: "transcribe_video", arguments: "\"a1\"" },
    expected: exactly({ id: "call_str", name: "transcribe_video", args: {}, invalidArgs: "arguments must be a JSON object, got a string" })
  },
  {
    // A string holding JSON is still a string: never decoded twice.
    call: { id: "call_json_str", name: "transcribe_video", arguments: JSON.stringify("{\"assetId\":\"a1\"}") },
    expected: exactly({ id: "call_json_str", name: "transcribe_video", args: {}, invalidArgs: "arguments must be a JSON object, got a string" })
  },
  {
    // Empty text is "no arguments", not an error.
    call: { id: "call_empty", name: "transcribe_video", arguments: "" },
    textOnly: true,
    expected: exactly({ id: "call_empty", name: "transcribe_video", args: {} })
  }
]

/** Registers the conformance tests of one adapter as `<name>: adapter conformance`. */
export const adapterConformance = (name: string, harness: AdapterHarness): void => {
  const settingsFor = (baseUrl: string, overrides: Partial<AdapterSettings> = {}): AdapterSettings => ({
    baseUrl,
    apiKey: harness.apiKey,
    timeoutMs: 5_000,
    maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES,
    ...overrides
  })

  const chatWith = (settings: AdapterSettings, chatParams: ProviderChatParams) =>
    ProviderAdapter.use((adapter) => adapter.chat(chatParams)).pipe(Effect.provide(harness.adapter(settings)))

  const failureOf = (settings: AdapterSettings, chatParams: ProviderChatParams = params([user("hi")])) =>
    chatWith(settings, chatParams).pipe(
      Effect.flip,
      Effect.tap((error) => Effect.sync(() => assertNoSecret(error, harness)))
    )

  const fakeAndSettings = (overrides: Partial<AdapterSettings> = {}) =>
    Effect.gen(function*() {
      const fake = yield* Fake
      fake.reset()
      return { fake, settings: settingsFor(fake.url, overrides) }
    })

  layer(Layer.effect(Fake, harness.startFake), { excludeTestServices: true })(`${name}: adapter conformance`, (it) => {
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

    it.effect("parses tool calls: valid arguments → args; malformed or non-object → args {} + invalidArgs", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings()
        const cases = toolCallCases.filter((c) => harness.toolArguments === "text" || c.textOnly !== true)
        fake.enqueue(harness.reply.toolCalls(cases.map((c) => c.call), "Working on it"))
        const response = yield* chatWith(settings, params([user("transcribe")], [TranscribeVideo]))
        const calls = response.toolCalls ?? []
        assert.deepStrictEqual(calls.map((c) => c.id), cases.map((c) => c.call.id))
        assert.deepStrictEqual(response, {
          content: "Working on it",
          toolCalls: cases.map((c, i) => c.expected(calls[i]))
        })
      }))

    it.effect("4xx → Status with the status code and the API's message", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings()
        fake.enqueue(
          harness.reply.status(400, "messages.0.content: Field required"),
          harness.reply.status(429, "Number of request tokens has exceeded your rate limit")
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
          harness.reply.status(500, "Internal server error"),
          harness.reply.status(529, "Overloaded"),
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
        // The fake requires the harness's key: send another key that we also hold secret, and it echoes that one back.
        const wrongKey = `${harness.keyPrefix}wrong-0123456789abcdef`
        const rejected = yield* chatWith({ ...settings, apiKey: wrongKey }, params([user("hello")])).pipe(Effect.flip)
        assert.strictEqual(rejected.reason, "Status")
        assert.strictEqual(rejected.status, 401)
        assert.include(rejected.message, harness.rejectedKeyMessage)
        assert.notInclude(rejected.message, wrongKey)

        // A proxy dumping the request headers (ours, and a credential we never knew) into its error.
        fake.respondWith((request) => harness.reply.status(400, harness.echoedCredentials(request)))
        const echoed = yield* failureOf(settings)
        assert.include(echoed.message, "[REDACTED]")
        assert.notInclude(echoed.message, harness.foreignSecret)

        fake.respondWith(() => baseReply.garbage(`oops ${harness.apiKey}`))
        const garbage = yield* failureOf(settings)
        assert.strictEqual(garbage.reason, "InvalidResponse")
      }))

    it.effect("timeout → Timeout, and the request is aborted", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings({ timeoutMs: 300 })
        fake.enqueue(baseReply.hang())
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
        const answer = harness.reply.text("too late")
        fake.enqueue(answer.type === "json" ? { ...answer, delayMs: 1_000 } : assert.fail("reply.text must be a JSON reply"))
        assert.strictEqual((yield* failureOf(settings)).reason, "Timeout")
      }))

    it.effect("garbage → InvalidResponse", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings()
        const replies = [
          baseReply.garbage(),
          baseReply.garbage("<html>hello</html>", "text/html"),
          baseReply.json({ hello: "world" }),
          ...harness.reply.invalid
        ]
        fake.enqueue(...replies)
        for (let i = 0; i < replies.length; i++) {
          assert.strictEqual((yield* failureOf(settings)).reason, "InvalidResponse", `reply ${i}`)
        }
      }))

    it.effect("connection destroyed → Network", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings()
        fake.enqueue(baseReply.destroy())
        assert.strictEqual((yield* failureOf(settings)).reason, "Network")
      }))

    it.effect("connection refused → Network", () =>
      Effect.gen(function*() {
        const port = yield* Effect.promise(() => closedPort())
        const error = yield* failureOf(settingsFor(`http://127.0.0.1:${port}/v1`))
        assert.strictEqual(error.reason, "Network")
      }))

    it.effect("an answer over maxResponseBytes → TooLarge: refused on its declared length, or cut off as it streams in", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings({ maxResponseBytes: 64 * 1024 })
        fake.enqueue(harness.reply.text("x".repeat(100 * 1024)))
        const declared = yield* failureOf(settings)
        assert.strictEqual(declared.reason, "TooLarge")
        assert.include(declared.message, "65536 bytes")

        // No length: the read stops at the bound and the transfer is dropped, long before the flood ends.
        const flood = baseReply.stream(64 * 1024 * 1024, { chunkBytes: 16 * 1024, intervalMs: 1 })
        fake.enqueue(flood.reply)
        const streamed = yield* failureOf(settings)
        assert.strictEqual(streamed.reason, "TooLarge")
        yield* Effect.promise(() => fake.waitFor((requests) => requests.at(-1)?.aborted === true))
        assert.isFalse(flood.progress.finished)

        // Within the bound: read whole.
        fake.enqueue(harness.reply.text("y".repeat(32 * 1024)))
        assert.strictEqual((yield* chatWith(settings, params([user("hi")]))).content.length, 32 * 1024)
      }))

    it.effect("an error answer over the bound is still its status", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings({ maxResponseBytes: 4 * 1024 })
        fake.enqueue(harness.reply.status(500, "z".repeat(100 * 1024)))
        const error = yield* failureOf(settings)
        assert.strictEqual(error.reason, "Status")
        assert.strictEqual(error.status, 500)
      }))

    it.effect("each failure has its public reason, a kind that quotes nothing the provider said", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings({ timeoutMs: 300, maxResponseBytes: 64 * 1024 })
        const reasonOf = (s: AdapterSettings = settings) => Effect.map(failureOf(s), publicReason)
        const wrongKey = `${harness.keyPrefix}wrong-0123456789abcdef`
        assert.strictEqual(yield* reasonOf({ ...settings, apiKey: wrongKey }), "status_401")
        fake.enqueue(harness.reply.status(429, "slow down"))
        assert.strictEqual(yield* reasonOf(), "status_429")
        fake.enqueue(baseReply.hang())
        assert.strictEqual(yield* reasonOf(), "timeout")
        fake.enqueue(baseReply.garbage())
        assert.strictEqual(yield* reasonOf(), "invalid_response")
        fake.enqueue(baseReply.destroy())
        assert.strictEqual(yield* reasonOf(), "connection_reset")
        fake.enqueue(baseReply.stream(16 * 1024 * 1024).reply)
        assert.strictEqual(yield* reasonOf(), "too_large")
        const port = yield* Effect.promise(() => closedPort())
        assert.strictEqual(yield* reasonOf(settingsFor(`http://127.0.0.1:${port}/v1`)), "connection_refused")
      }))

    it.effect("one adapter serves concurrent calls, with a trailing slash on the base URL", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings()
        const answers = yield* Effect.gen(function*() {
          const adapter = yield* ProviderAdapter
          return yield* Effect.all([adapter.chat(params([user("one")])), adapter.chat(params([user("two")]))], { concurrency: 2 })
        }).pipe(Effect.provide(harness.adapter({ ...settings, baseUrl: `${settings.baseUrl}/` })))
        assert.deepStrictEqual(answers.map((a) => a.content).sort(), ["fake answer to: one", "fake answer to: two"])
        // Both at the endpoint's own path: no doubled slash.
        assert.strictEqual(fake.chatRequests().length, 2)
      }))
  })
}
