/**
 * The stream readers without HTTP: wire events in, the port's events out.
 * What real servers do beyond the fakes' answers: a call's id or name in a
 * later chunk, no `[DONE]`, events after the end, errors inside a 200, a
 * proxy's odd shapes; and the bytes-to-events step (`sseBytes`) on chunks
 * that split events, lines and characters.
 */
import { assert, describe, it } from "@effect/vitest"
import { Readable } from "node:stream"
import { Cause, Effect, Exit } from "effect"
import { messageEventsReader } from "../src/anthropic/MessageEvents.ts"
import { completionChunksReader } from "../src/openai/CompletionChunks.ts"
import type { ProviderChatParams } from "@switchboard/domain"
import { eventsOf, ProviderError } from "../src/ProviderAdapter.ts"
import type { SseEvent } from "../src/SseAnswer.ts"
import { pumpReadable, sseBytes } from "../src/SseAnswer.ts"
import { readAnswer } from "../src/StreamedAnswer.ts"
import type { AnswerReader } from "../src/StreamedAnswer.ts"
import { checkFinished, runStream, streamFailure } from "./StreamChecks.ts"

const SECRET = "sk-secret-0123456789"

const event = (data: unknown, name = "message"): SseEvent => ({
  _tag: "Event",
  event: name,
  id: undefined,
  data: typeof data === "string" ? data : JSON.stringify(data)
})

const NO_PARAMS: ProviderChatParams = { messages: [], systemPrompt: "", toolSchemas: [] }

/** The events pushed in one read, then the transport's end (or its failure, `tail`). */
const read = (reader: AnswerReader, events: ReadonlyArray<SseEvent>, tail?: ProviderError) =>
  runStream(eventsOf((_, sink) =>
    readAnswer(
      (onEvents) =>
        Effect.suspend(() => {
          const refused = onEvents(events)
          return refused !== undefined ? Effect.fail(refused) : tail === undefined ? Effect.void : Effect.fail(tail)
        }),
      () => reader,
      sink
    ), NO_PARAMS))

const finished = (reader: AnswerReader, events: ReadonlyArray<SseEvent>) =>
  Effect.map(read(reader, events), (outcome) => ({ events: outcome.events, response: checkFinished(outcome.events) }))

const failed = (reader: AnswerReader, events: ReadonlyArray<SseEvent>) => Effect.map(read(reader, events), streamFailure)

// ---------------------------------------------------------------------------

const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
  event({ object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finishReason }] })
const call = (index: number, fields: Record<string, unknown>) => chunk({ tool_calls: [{ index, ...fields }] })
const done = event("[DONE]")
const openai = () => completionChunksReader([SECRET])

describe("CompletionChunks", () => {
  it.effect("a call whose name comes after its first arguments starts when named, with what came before", () =>
    Effect.gen(function*() {
      const { events, response } = yield* finished(openai(), [
        call(0, { id: "call_x", function: { arguments: "{\"a\":" } }),
        call(0, { function: { name: "lookup", arguments: "1" } }),
        call(0, { function: { arguments: "}" } }),
        chunk({}, "tool_calls"),
        done
      ])
      assert.deepStrictEqual(events.slice(0, 3), [
        { type: "tool-call-start", id: "call_x", name: "lookup" },
        { type: "tool-call-delta", id: "call_x", delta: "{\"a\":1" },
        { type: "tool-call-delta", id: "call_x", delta: "}" }
      ])
      assert.deepStrictEqual(response.toolCalls, [{ id: "call_x", name: "lookup", args: { a: 1 } }])
    }))

  it.effect("calls without ids get chat's ids; a custom tool's call is skipped as chat skips it; broken JSON → invalidArgs", () =>
    Effect.gen(function*() {
      const { response } = yield* finished(openai(), [
        call(0, { type: "function", function: { name: "a", arguments: "" } }),
        call(1, { type: "custom", id: "call_custom", custom: { name: "free" } }),
        call(2, { function: { name: "b", arguments: "{oops" } }),
        chunk({}, "tool_calls"),
        done
      ])
      const calls = response.toolCalls ?? []
      assert.deepStrictEqual(calls.map((c) => [c.id, c.name]), [["call_0", "a"], ["call_2", "b"]])
      assert.deepStrictEqual(calls[0]?.args, {})
      assert.match(calls[1]?.invalidArgs ?? "", /^arguments are not valid JSON/)
    }))

  it.effect("the usage of the last chunk (no choices); a body ending after finish_reason without [DONE] is complete", () =>
    Effect.gen(function*() {
      const { response } = yield* finished(openai(), [
        chunk({ role: "assistant", content: "" }),
        chunk({ content: "Hi" }),
        chunk({}, "stop"),
        event({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 4 } } })
      ])
      assert.deepStrictEqual(response, { content: "Hi", usage: { inputTokens: 7, outputTokens: 2, cachedInputTokens: 4 } })
    }))

  it.effect("what follows [DONE] is not answer, not even a failure", () =>
    Effect.gen(function*() {
      const outcome = yield* read(openai(), [chunk({ content: "Hi" }), done, chunk({ content: " again" })], new ProviderError({ reason: "Network", message: "socket closed after the end" }))
      assert.deepStrictEqual(checkFinished(outcome.events), { content: "Hi" })
    }))

  it.effect("a body ending before finish_reason or [DONE] → InvalidResponse", () =>
    Effect.gen(function*() {
      const error = yield* failed(openai(), [chunk({ content: "Hi" })])
      assert.strictEqual(error.reason, "InvalidResponse")
    }))

  it.effect("an error chunk → Status when it carries an HTTP status, else InvalidResponse; secrets redacted", () =>
    Effect.gen(function*() {
      const limited = yield* failed(openai(), [chunk({ content: "Hi" }), event({ error: { message: "rate limited", code: "429" } })])
      assert.strictEqual(limited.reason, "Status")
      assert.strictEqual(limited.status, 429)
      assert.include(limited.message, "rate limited")
      const other = yield* failed(openai(), [event({ error: { message: `bad key ${SECRET}`, type: "server_error", code: null } })])
      assert.strictEqual(other.reason, "InvalidResponse")
      assert.notInclude(other.message, SECRET)
      const garbage = yield* failed(openai(), [event(`<html>${SECRET}`)])
      assert.strictEqual(garbage.reason, "InvalidResponse")
      assert.notInclude(garbage.message, SECRET)
    }))
})

// ---------------------------------------------------------------------------

const anthropicEvent = (type: string, data: Record<string, unknown> = {}) => event({ type, ...data }, type)
const start = (usage: Record<string, unknown> = { input_tokens: 5, output_tokens: 0 }) =>
  anthropicEvent("message_start", { message: { id: "msg", type: "message", role: "assistant", content: [], usage } })
const blockStart = (index: number, block: Record<string, unknown>) => anthropicEvent("content_block_start", { index, content_block: block })
const blockDelta = (index: number, delta: Record<string, unknown>) => anthropicEvent("content_block_delta", { index, delta })
const stop = (outputTokens = 9) => [
  anthropicEvent("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: outputTokens } }),
  anthropicEvent("message_stop")
]
const anthropic = () => messageEventsReader([SECRET])

describe("MessageEvents", () => {
  it.effect("text and tool_use blocks, thinking skipped, pings ignored; the usage from message_start and message_delta", () =>
    Effect.gen(function*() {
      const { response } = yield* finished(anthropic(), [
        start({ input_tokens: 5, cache_read_input_tokens: 100, output_tokens: 1 }),
        anthropicEvent("ping"),
        blockStart(0, { type: "thinking", thinking: "" }),
        blockDelta(0, { type: "thinking_delta", thinking: "hmm" }),
        blockStart(1, { type: "text", text: "" }),
        blockDelta(1, { type: "text_delta", text: "Let me " }),
        blockDelta(1, { type: "text_delta", text: "look." }),
        blockStart(2, { type: "tool_use", id: "toolu_1", name: "lookup", input: {} }),
        blockDelta(2, { type: "input_json_delta", partial_json: "{\"q\":" }),
        blockDelta(2, { type: "input_json_delta", partial_json: "\"x\"}" }),
        blockStart(3, { type: "tool_use", name: "noargs", input: {} }),
        ...stop(12)
      ])
      assert.deepStrictEqual(response, {
        content: "Let me look.",
        toolCalls: [{ id: "toolu_1", name: "lookup", args: { q: "x" } }, { id: "call_3", name: "noargs", args: {} }],
        usage: { inputTokens: 105, outputTokens: 12, cachedInputTokens: 100 }
      })
    }))

  it.effect("a proxy's whole input in content_block_start; JSON that does not parse → invalidArgs", () =>
    Effect.gen(function*() {
      const { events, response } = yield* finished(anthropic(), [
        start(),
        blockStart(0, { type: "tool_use", id: "toolu_1", name: "a", input: { q: 1 } }),
        blockStart(1, { type: "tool_use", id: "toolu_2", name: "b", input: {} }),
        blockDelta(1, { type: "input_json_delta", partial_json: "{\"q\"" }),
        ...stop()
      ])
      assert.deepStrictEqual(events[1], { type: "tool-call-delta", id: "toolu_1", delta: "{\"q\":1}" })
      assert.deepStrictEqual(response.toolCalls?.[0], { id: "toolu_1", name: "a", args: { q: 1 } })
      assert.match(response.toolCalls?.[1]?.invalidArgs ?? "", /^arguments are not valid JSON/)
    }))

  it.effect("the end without message_stop: complete after a stop reason, InvalidResponse before", () =>
    Effect.gen(function*() {
      const text = [start(), blockStart(0, { type: "text", text: "" }), blockDelta(0, { type: "text_delta", text: "Hi" })]
      const { response } = yield* finished(anthropic(), [...text, stop()[0]!])
      assert.strictEqual(response.content, "Hi")
      assert.strictEqual((yield* failed(anthropic(), text)).reason, "InvalidResponse")
    }))

  it.effect("an error event → Status with the status of its type (unknown types: InvalidResponse); secrets redacted", () =>
    Effect.gen(function*() {
      const error = (type: string, message = "nope") => anthropicEvent("error", { error: { type, message } })
      const overloaded = yield* failed(anthropic(), [start(), error("overloaded_error", "Overloaded")])
      assert.strictEqual(overloaded.reason, "Status")
      assert.strictEqual(overloaded.status, 529)
      assert.include(overloaded.message, "overloaded_error: Overloaded")
      assert.strictEqual((yield* failed(anthropic(), [error("rate_limit_error")])).status, 429)
      const odd = yield* failed(anthropic(), [error("brand_new_error", `key ${SECRET}`)])
      assert.strictEqual(odd.reason, "InvalidResponse")
      assert.notInclude(odd.message, SECRET)
    }))

  it.effect("a tool_use without a name, or a delta for a block never started → InvalidResponse", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* failed(anthropic(), [start(), blockStart(0, { type: "tool_use", id: "t", input: {} })])).reason, "InvalidResponse")
      assert.strictEqual((yield* failed(anthropic(), [start(), blockDelta(4, { type: "text_delta", text: "x" })])).reason, "InvalidResponse")
    }))
})

// ---------------------------------------------------------------------------

describe("sseBytes", () => {
  /** The events `sseBytes` hands on, fed `chunks` in order; and the failure that stopped it, if one did. */
  const feed = (maxBytes: number, ...chunks: ReadonlyArray<string | Uint8Array>) => {
    const events: Array<SseEvent> = []
    const onBytes = sseBytes(maxBytes, (batch) => {
      events.push(...batch)
      return undefined
    })
    for (const chunk of chunks) {
      const failure = onBytes(typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk)
      if (failure !== undefined) return { events, failure }
    }
    return { events, failure: undefined }
  }

  it("events split across chunks, CRLF lines, a character split between chunks, comments; an unterminated last event dropped", () => {
    const euro = new TextEncoder().encode("data: 3€\n\n")
    const { events, failure } = feed(
      1024,
      ": a comment\r\nevent: one\r\ndata: 1",
      "\r\n\r\ndata: 2\n\n",
      euro.subarray(0, 8),
      euro.subarray(8),
      "data: cut"
    )
    assert.isUndefined(failure)
    assert.deepStrictEqual(events.map((e) => [e.event, e.data]), [["one", "1"], ["message", "2"], ["message", "3€"]])
  })

  it("past maxBytes of body, however it is split into events → TooLarge", () => {
    const many = Array.from({ length: 20 }, (_, i) => `data: ${"x".repeat(50)}${i}\n\n`)
    const { events, failure } = feed(1024, ...many)
    assert.strictEqual(failure?.reason, "TooLarge")
    assert.include(failure?.message, "1024 bytes")
    assert.isBelow(events.length, 20)
  })

  it("a failure the consumer returns stops the reading with it", () => {
    const refusal = new ProviderError({ reason: "TooLarge", message: "refused" })
    const onBytes = sseBytes(1024, () => refusal)
    assert.isUndefined(onBytes(new TextEncoder().encode("data: 1")))
    assert.strictEqual(onBytes(new TextEncoder().encode("\n\n")), refusal)
  })
})

// ---------------------------------------------------------------------------

describe("readAnswer", () => {
  it.effect("a piece the consumer refuses fails the call, even when the answer's end came in the same read", () =>
    Effect.gen(function*() {
      const refusal = new ProviderError({ reason: "TooLarge", message: "refused" })
      const error = yield* readAnswer(
        (onEvents) =>
          Effect.suspend(() => {
            const failure = onEvents([chunk({ content: "hi" }), chunk({}, "stop"), done])
            return failure === undefined ? Effect.void : Effect.fail(failure)
          }),
        openai,
        () => refusal
      ).pipe(Effect.flip)
      assert.strictEqual(error, refusal)
    }))
})

describe("pumpReadable", () => {
  const networkError = (cause: unknown) => new ProviderError({ reason: "Network", message: String(cause) })

  it.effect("each chunk to the consumer as it comes, then the end", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const body = Readable.from([Buffer.from("a"), Buffer.from("b")], { objectMode: false })
      yield* pumpReadable(body, (chunk) => void seen.push(Buffer.from(chunk).toString()), networkError)
      assert.deepStrictEqual(seen, ["a", "b"])
    }))

  it.effect("a failure the consumer returns ends the reading and destroys the body", () =>
    Effect.gen(function*() {
      const refusal = new ProviderError({ reason: "TooLarge", message: "refused" })
      const body = new Readable({ read() {} })
      body.push("a")
      const error = yield* pumpReadable(body, () => refusal, networkError).pipe(Effect.flip)
      assert.strictEqual(error, refusal)
      assert.isTrue(body.destroyed)
    }))

  it.effect("a consumer that throws is the call's defect, not the process's: the body is destroyed", () =>
    Effect.gen(function*() {
      const body = new Readable({ read() {} })
      body.push("a")
      const exit = yield* pumpReadable(body, () => {
        throw new Error("bug")
      }, networkError).pipe(Effect.exit)
      assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
      assert.isTrue(body.destroyed)
    }))

  it.effect("a body destroyed before it is read fails at once, with its error", () =>
    Effect.gen(function*() {
      const body = new Readable({ read() {} })
      body.on("error", () => {})
      body.destroy(new Error("boom"))
      const error = yield* pumpReadable(body, () => undefined, networkError).pipe(Effect.flip)
      assert.strictEqual(error.reason, "Network")
      assert.include(error.message, "boom")
    }))

  it.effect("a body that errors midway fails with the transport's error", () =>
    Effect.gen(function*() {
      const body = new Readable({ read() {} })
      body.push("a")
      setTimeout(() => body.destroy(new Error("reset")), 5)
      const error = yield* pumpReadable(body, () => undefined, networkError).pipe(Effect.flip)
      assert.include(error.message, "reset")
    }))
})
