/**
 * What every provider adapter must do, whatever API it speaks, over real HTTP
 * against the provider's fake: keep data parts and metadata off the wire; map
 * error statuses, deadlines, unreadable answers and broken connections to the
 * same `ProviderError` reasons; keep the API key out of every error message;
 * read tool call arguments into `args`, or `args: {}` and `invalidArgs`.
 *
 * `adapterConformance(name, harness)` registers these tests once per adapter
 * (and per transport), and once per way of calling it: `chat`, and `stream`
 * (the fakes stream any answer asked for as a stream; the stream must keep
 * the port's promise, `StreamChecks`, and its `finish` is what is checked).
 * Then what is the streams' own: text and arguments in several deltas, the
 * usage, a stream cut or failed midway, an interrupted consumer closing the
 * provider's connection, the deadline over the whole stream. The harness says
 * how to start the provider's fake, build the adapter and phrase the
 * provider's answers; every assertion is the suite's. Each adapter's own test file keeps only what is its API's own (the
 * request shape on the wire, headers, merging rules, transcription, …).
 * `excludeTestServices`: real sockets and real deadlines need the live clock.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer, Stream } from "effect"
import type { Scope } from "effect"
import { TranscribeVideo } from "@switchboard/domain"
import type { ProviderChatParams, ProviderUsage, ToolCall } from "@switchboard/domain"
import { eventsOf, ProviderAdapter, publicReason } from "../src/ProviderAdapter.ts"
import { DEFAULT_MAX_RESPONSE_BYTES } from "../src/ResponseLimit.ts"
import type { ProviderError, ProviderStreamEvent } from "../src/ProviderAdapter.ts"
import { baseReply, closedPort } from "../src/testing/FakeHttp.ts"
import type { FakeHandler, FakeReply, FakeStreamOptions, RecordedRequest } from "../src/testing/FakeHttp.ts"
import { params, user } from "./Messages.ts"
import { checkFinished, deltasOf, finishedResponse, runStream, streamFailure, textOf } from "./StreamChecks.ts"

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
  /** How streamed answers are streamed from now on. */
  streamWith(options: FakeStreamOptions): void
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
    /** A 200 event stream with some text that ends (cleanly) before the API's end marker. */
    readonly unfinished: FakeReply
  }
  /** An answer reporting usage, and that usage as the port counts it (input including the cached part). */
  readonly usage: { readonly reply: FakeReply; readonly expected: ProviderUsage }
  /** What a streaming request adds to the same request's body (and the fake, like the API, accepts). */
  readonly streamFlags: Readonly<Record<string, unknown>>
  /** What the fake's mid-stream error (`errorAfter`) becomes. */
  readonly midStreamError: { readonly reason: ProviderError["reason"]; readonly status?: number }
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

/** How a test calls the adapter: `chat`, or `stream` read to its `finish` (the port's promise checked on the way). */
type Mode = "chat" | "stream"

const callIn = (mode: Mode) => (adapter: ProviderAdapter["Service"], chatParams: ProviderChatParams) =>
  mode === "chat" ? adapter.chat(chatParams) : Effect.flatMap(runStream(eventsOf(adapter.streamTo, chatParams)), finishedResponse)

/**
 * Registers the conformance tests of one adapter as `<name>: adapter conformance (chat)`,
 * `… (stream)`, and `<name>: streaming`.
 */
export const adapterConformance = (name: string, harness: AdapterHarness): void => {
  for (const mode of ["chat", "stream"] as const) conformance(name, harness, mode)
  streaming(name, harness)
}

const defaultSettings = (harness: AdapterHarness) => (baseUrl: string, overrides: Partial<AdapterSettings> = {}): AdapterSettings => ({
  baseUrl,
  apiKey: harness.apiKey,
  timeoutMs: 5_000,
  maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES,
  ...overrides
})

const fakeWith = (settingsFor: (baseUrl: string, overrides?: Partial<AdapterSettings>) => AdapterSettings) =>
(overrides: Partial<AdapterSettings> = {}) =>
  Effect.gen(function*() {
    const fake = yield* Fake
    fake.reset()
    return { fake, settings: settingsFor(fake.url, overrides) }
  })

const conformance = (name: string, harness: AdapterHarness, mode: Mode): void => {
  const call = callIn(mode)
  const settingsFor = defaultSettings(harness)

  const chatWith = (settings: AdapterSettings, chatParams: ProviderChatParams) =>
    ProviderAdapter.use((adapter) => call(adapter, chatParams)).pipe(Effect.provide(harness.adapter(settings)))

  const failureOf = (settings: AdapterSettings, chatParams: ProviderChatParams = params([user("hi")])) =>
    chatWith(settings, chatParams).pipe(
      Effect.flip,
      Effect.tap((error) => Effect.sync(() => assertNoSecret(error, harness)))
    )

  const fakeAndSettings = fakeWith(settingsFor)

  layer(Layer.effect(Fake, harness.startFake), { excludeTestServices: true })(`${name}: adapter conformance (${mode})`, (it) => {
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
          toolCalls: cases.map((c, i) => c.expected(calls[i])),
          usage: { inputTokens: 1, outputTokens: 1 }
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
          return yield* Effect.all([call(adapter, params([user("one")])), call(adapter, params([user("two")]))], { concurrency: 2 })
        }).pipe(Effect.provide(harness.adapter({ ...settings, baseUrl: `${settings.baseUrl}/` })))
        assert.deepStrictEqual(answers.map((a) => a.content).sort(), ["fake answer to: one", "fake answer to: two"])
        // Both at the endpoint's own path: no doubled slash.
        assert.strictEqual(fake.chatRequests().length, 2)
      }))
  })
}

/** What only a stream can do or suffer, over real HTTP like the rest. */
const streaming = (name: string, harness: AdapterHarness): void => {
  const settingsFor = defaultSettings(harness)
  const fakeAndSettings = fakeWith(settingsFor)
  const withAdapter = <A, E>(settings: AdapterSettings, f: (adapter: ProviderAdapter["Service"]) => Effect.Effect<A, E>) =>
    ProviderAdapter.use(f).pipe(Effect.provide(harness.adapter(settings)))
  const streamWith = (settings: AdapterSettings, chatParams: ProviderChatParams = params([user("hi")])) =>
    withAdapter(settings, (adapter) => runStream(eventsOf(adapter.streamTo, chatParams)))
  /** Both ways of calling, for one answer each: `chat`'s answer, and the stream's events. */
  const bothWays = (settings: AdapterSettings, reply: FakeReply, chatParams: ProviderChatParams) =>
    Effect.gen(function*() {
      const fake = yield* Fake
      fake.enqueue(reply, reply)
      return yield* withAdapter(settings, (adapter) =>
        Effect.all({ chat: adapter.chat(chatParams), streamed: runStream(eventsOf(adapter.streamTo, chatParams)) }))
    })
  /** Far longer than any test waits for it (4 s): whatever ends it early, it never ends on its own. */
  const slowText = (deltas = 200) =>
    baseReply.streamed(harness.reply.text(Array.from({ length: deltas }, (_, i) => `w${i}`).join(" ")), {
      textDeltas: deltas,
      intervalMs: 20
    })
  const fakeSaw = (predicate: (request: RecordedRequest) => boolean) =>
    Effect.gen(function*() {
      const fake = yield* Fake
      yield* Effect.promise(() => fake.waitFor((requests) => requests.some(predicate)))
    })

  layer(Layer.effect(Fake, harness.startFake), { excludeTestServices: true })(`${name}: streaming`, (it) => {
    it.effect("asks for the same request streamed, and streams the text in several deltas that add up to chat's content", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings()
        const text = "The quick brown fox jumps over the lazy dog"
        const chatParams = params([user("fox")], [TranscribeVideo], "SYSTEM PROMPT")
        const { chat, streamed } = yield* bothWays(settings, baseReply.streamed(harness.reply.text(text), { textDeltas: 7 }), chatParams)
        assert.isTrue(Exit.isSuccess(streamed.exit))
        const response = checkFinished(streamed.events)
        assert.strictEqual(deltasOf(streamed.events, "text-delta"), 7)
        assert.strictEqual(textOf(streamed.events), text)
        assert.deepStrictEqual(response, chat)
        assert.strictEqual(response.content, text)
        const [whole, asStream] = fake.chatRequests()
        assert.deepStrictEqual(asStream?.body, { ...(whole?.body as object), ...harness.streamFlags })
        assert.match(String(asStream?.headers.accept), /text\/event-stream/)
        assert.isTrue(asStream?.streamed?.finished)
        assert.isFalse(asStream?.aborted)
      }))

    it.effect("tool calls: each started with its id and name, its arguments in deltas, parsed as chat parses them", () =>
      Effect.gen(function*() {
        const { settings } = yield* fakeAndSettings()
        const reply = baseReply.streamed(harness.reply.toolCalls([
          { id: "call_a", name: "transcribe_video", arguments: "{\"assetId\":\"a1\",\"language\":\"en\"}" },
          { id: "call_b", name: "transcribe_video", arguments: "[\"not\",\"an\",\"object\"]" }
        ], "Two calls"), { argumentDeltas: 4 })
        const { chat, streamed } = yield* bothWays(settings, reply, params([user("transcribe")], [TranscribeVideo]))
        const response = checkFinished(streamed.events)
        assert.deepStrictEqual(response, chat)
        assert.deepStrictEqual(response.toolCalls, [
          { id: "call_a", name: "transcribe_video", args: { assetId: "a1", language: "en" } },
          { id: "call_b", name: "transcribe_video", args: {}, invalidArgs: "arguments must be a JSON object, got an array" }
        ])
        const deltasFor = (id: string) => streamed.events.filter((e) => e.type === "tool-call-delta" && e.id === id).length
        assert.strictEqual(deltasFor("call_a"), 4)
        assert.strictEqual(deltasFor("call_b"), 4)
        // In the provider's order: the text, then each call's start before its arguments.
        assert.deepStrictEqual(
          streamed.events.map((e) => e.type).filter((t, i, all) => t !== all[i - 1]),
          ["text-delta", "tool-call-start", "tool-call-delta", "tool-call-start", "tool-call-delta", "finish"]
        )
      }))

    it.effect("usage: the provider's counts in finish (and in chat's answer), the cached part of the prompt included", () =>
      Effect.gen(function*() {
        const { settings } = yield* fakeAndSettings()
        const { chat, streamed } = yield* bothWays(settings, harness.usage.reply, params([user("count")]))
        assert.deepStrictEqual(chat.usage, harness.usage.expected)
        assert.deepStrictEqual(checkFinished(streamed.events).usage, harness.usage.expected)
      }))

    it.effect("a stream the provider cuts midway fails with Network after its first deltas, and never finishes", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings()
        fake.enqueue(baseReply.streamed(harness.reply.text("abcdefghijkl"), { textDeltas: 6, cutAfter: 2 }))
        const outcome = yield* streamWith(settings)
        const error = streamFailure(outcome)
        assert.strictEqual(error.reason, "Network")
        assert.strictEqual(deltasOf(outcome.events, "text-delta"), 2)
        assert.strictEqual(textOf(outcome.events), "abcd")
        assertNoSecret(error, harness)
        const [request] = fake.chatRequests()
        assert.strictEqual(request?.streamed?.deltasSent, 2)
        assert.isFalse(request?.aborted, "the provider cut it, the client did not")
      }))

    it.effect("a stream that ends cleanly before the API's end marker → InvalidResponse, no finish", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings()
        fake.enqueue(harness.reply.unfinished)
        const outcome = yield* streamWith(settings)
        const error = streamFailure(outcome)
        assert.strictEqual(error.reason, "InvalidResponse")
        assert.include(error.message, "ended before")
        assert.isAbove(deltasOf(outcome.events, "text-delta"), 0)
      }))

    it.effect("an error event midway fails the stream as the API's status would, no finish", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings()
        fake.enqueue(baseReply.streamed(harness.reply.text("one two three four"), { errorAfter: 1 }))
        const outcome = yield* streamWith(settings)
        const error = streamFailure(outcome)
        assert.strictEqual(error.reason, harness.midStreamError.reason)
        assert.strictEqual(error.status, harness.midStreamError.status)
        assert.strictEqual(deltasOf(outcome.events, "text-delta"), 1)
      }))

    it.effect("interrupting the consumer closes the provider's connection: the rest is never sent", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings()
        fake.enqueue(slowText())
        const seen: Array<ProviderStreamEvent> = []
        yield* withAdapter(settings, (adapter) =>
          Effect.gen(function*() {
            const consumer = yield* eventsOf(adapter.streamTo, params([user("hi")])).pipe(
              Stream.runForEach((event) => Effect.sync(() => void seen.push(event))),
              Effect.forkChild
            )
            yield* Effect.promise(() => fake.waitFor((requests) => (requests[0]?.streamed?.deltasSent ?? 0) >= 2))
            yield* Fiber.interrupt(consumer)
          }))
        yield* fakeSaw((request) => request.aborted)
        const [request] = fake.chatRequests()
        assert.isFalse(request?.streamed?.finished)
        assert.isBelow(request?.streamed?.deltasSent ?? 200, 200)
        assert.isFalse(seen.some((e) => e.type === "finish"))
      }))

    it.effect("a consumer that stops reading early (take) closes the connection too", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings()
        fake.enqueue(slowText())
        const firstTwo = yield* withAdapter(settings, (adapter) => Stream.runCollect(Stream.take(eventsOf(adapter.streamTo, params([user("hi")])), 2)))
        assert.deepStrictEqual(firstTwo.map((e) => e.type), ["text-delta", "text-delta"])
        yield* fakeSaw((request) => request.aborted)
        assert.isFalse(fake.chatRequests()[0]?.streamed?.finished)
      }))

    it.effect("the deadline bounds the whole stream: Timeout midway, and the connection closed", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings({ timeoutMs: 600 })
        fake.enqueue(slowText())
        const outcome = yield* streamWith(settings)
        const error = streamFailure(outcome)
        assert.strictEqual(error.reason, "Timeout")
        assert.include(error.message, "600 ms")
        assert.isAbove(deltasOf(outcome.events, "text-delta"), 0, "deltas came before the deadline")
        yield* fakeSaw((request) => request.aborted)
      }))

    it.effect("a stream past maxResponseBytes → TooLarge, and the connection closed", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings({ maxResponseBytes: 4 * 1024 })
        fake.enqueue(baseReply.streamed(harness.reply.text("y".repeat(64 * 1024)), { textDeltas: 64, intervalMs: 10 }))
        const error = streamFailure(yield* streamWith(settings))
        assert.strictEqual(error.reason, "TooLarge")
        yield* fakeSaw((request) => request.aborted)
        assert.isFalse(fake.chatRequests()[0]?.streamed?.finished)
      }))

    it.effect("a non-2xx answer → Status before any event", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings()
        fake.enqueue(harness.reply.status(429, "slow down"))
        const outcome = yield* streamWith(settings)
        const error = streamFailure(outcome)
        assert.strictEqual(error.reason, "Status")
        assert.strictEqual(error.status, 429)
        assert.deepStrictEqual(outcome.events, [])
      }))

    it.effect("the fake's options: streamWith sets the deltas and pace of every streamed answer, reporting each send", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings()
        const sent: Array<{ readonly index: number; readonly text: string; readonly sentAt: number }> = []
        fake.streamWith({ textDeltas: 5, intervalMs: 5, onDelta: ({ index, sentAt, text }) => void sent.push({ index, text, sentAt }) })
        fake.enqueue(harness.reply.text("a b c d e f g h i j"))
        const outcome = yield* streamWith(settings)
        const response = checkFinished(outcome.events)
        const deltas = outcome.events.flatMap((e) => e.type === "text-delta" ? [e.delta] : [])
        assert.strictEqual(deltas.length, 5)
        yield* Effect.promise(() => fake.waitFor(() => sent.length === 5))
        assert.deepStrictEqual(sent.map((s) => s.index), [0, 1, 2, 3, 4])
        assert.strictEqual(sent.map((s) => s.text).join(""), response.content)
        assert.isTrue(sent.every((s, i) => i === 0 || s.sentAt >= sent[i - 1]!.sentAt))
      }))

    it.effect("a kept-alive connection serves the next call once a stream has finished", () =>
      Effect.gen(function*() {
        const { fake, settings } = yield* fakeAndSettings()
        yield* withAdapter(settings, (adapter) =>
          Effect.gen(function*() {
            yield* Effect.flatMap(runStream(eventsOf(adapter.streamTo, params([user("one")]))), finishedResponse)
            yield* Effect.flatMap(runStream(eventsOf(adapter.streamTo, params([user("two")]))), finishedResponse)
          }))
        const [first, second] = fake.chatRequests()
        assert.strictEqual(second?.remotePort, first?.remotePort)
      }))
  })
}
