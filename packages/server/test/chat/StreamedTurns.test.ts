/**
 * Streamed turns on one replica (docs/streaming.md): the chunks of a turn as
 * the contract orders them, the stream's text equal to the stored answer, the
 * JSON errors before the stream, a turn that outlives its connection, resume
 * from the first chunk, stop with the partial answer stored.
 */
import { assert, describe, layer } from "@effect/vitest"
import type { ChatMessage, UiChunk } from "@switchboard/domain"
import { Effect, Fiber } from "effect"
import { paced } from "../support/PacedProvider.ts"
import { eventually, transcriptOf } from "../support/JobsHelpers.ts"
import { backend } from "../support/TestDatabase.ts"
import { baseUrl, layerTestServer, postJson, request } from "../support/TestServer.ts"
import { readEventStream, streamedText, streamInit } from "../support/EventStream.ts"

const user = (id: string, content: string): ChatMessage => ({ id, role: "user", content, timestamp: 1 })

const provider = paced()

/** Waits until the chat has a running turn that has streamed something (its stream answers 200). */
const streaming = (chatId: string) =>
  baseUrl.pipe(
    Effect.flatMap((base) => eventually(readEventStream(`${base}/api/chats/${chatId}/stream`, { method: "GET" }, () => true), (r) => r.status === 200, `a running turn of ${chatId}`))
  )

const types = (chunks: ReadonlyArray<UiChunk>) => chunks.map((c) => c.type)

describe(`streamed turns (${backend})`, () => {
  layer(layerTestServer(provider.layer), { excludeTestServices: true })("one replica", (it) => {
    it.effect("streams the turn as the contract orders it; the text is the stored answer", () =>
      Effect.gen(function*() {
        provider.state.pieces = ["Hello", ", ", "world", "."]
        provider.state.gapMs = 0
        const base = yield* baseUrl
        const read = yield* readEventStream(`${base}/api/agent/chat`, streamInit({ chatId: "s-1", messages: [user("u1", "hi")] }))
        assert.strictEqual(read.status, 200)
        assert.strictEqual(read.headers.get("content-type"), "text/event-stream")
        assert.strictEqual(read.headers.get("x-vercel-ai-ui-message-stream"), "v1")
        assert.strictEqual(read.headers.get("cache-control"), "no-cache")
        assert.isTrue(read.done)
        assert.deepStrictEqual(types(read.chunks), [
          "start", "start-step", "text-start", "text-delta", "text-delta", "text-delta", "text-delta", "text-end", "finish-step", "finish"
        ])
        const start = read.chunks[0] as Extract<UiChunk, { type: "start" }>
        const finish = read.chunks[read.chunks.length - 1] as Extract<UiChunk, { type: "finish" }>
        assert.deepStrictEqual(finish.messageMetadata, { chatId: "s-1", usage: { inputTokens: 7, outputTokens: 4 } })
        const transcript = yield* transcriptOf("s-1")
        const answers = transcript.filter((m) => m.role === "assistant")
        assert.strictEqual(answers.length, 1)
        assert.strictEqual(answers[0]!.id, start.messageId)
        assert.strictEqual(answers[0]!.content, streamedText(read.chunks))
        assert.strictEqual(answers[0]!.content, "Hello, world.")
      }))

    it.effect("a client tool call streams its input and ends the stream at tool-input-available", () =>
      Effect.gen(function*() {
        provider.state.toolCall = true
        const base = yield* baseUrl
        const read = yield* readEventStream(`${base}/api/agent/chat`, streamInit({ chatId: "s-tool", messages: [user("u1", "transcribe it")] }))
        provider.state.toolCall = false
        const kinds = types(read.chunks)
        assert.includeMembers(kinds, ["tool-input-start", "tool-input-delta", "tool-input-available"])
        const available = read.chunks.find((c) => c.type === "tool-input-available") as Extract<UiChunk, { type: "tool-input-available" }>
        assert.deepStrictEqual(available, { type: "tool-input-available", toolCallId: "call_1", toolName: "transcribe_video", input: { assetId: "a1" } })
        const stored = (yield* transcriptOf("s-tool")).filter((m) => m.role === "assistant")
        assert.deepStrictEqual(stored[0]!.toolCalls?.map((c) => c.id), ["call_1"])
      }))

    it.effect("errors before the stream are the JSON answers: 400, 409", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const bad = yield* readEventStream(`${base}/api/agent/chat`, streamInit({ chatId: "s-bad", messages: "nope" }))
        assert.strictEqual(bad.status, 400)
        assert.strictEqual(bad.json.code, "invalid_request")
        provider.state.gapMs = 200
        const first = yield* readEventStream(`${base}/api/agent/chat`, streamInit({ chatId: "s-busy", messages: [user("u1", "hi")] }), (c) => c.type === "text-delta").pipe(Effect.forkChild)
        yield* streaming("s-busy")
        const second = yield* readEventStream(`${base}/api/agent/chat`, streamInit({ chatId: "s-busy", messages: [user("u2", "again")] }))
        assert.strictEqual(second.status, 409)
        assert.strictEqual(second.json.code, "turn_in_flight")
        yield* Fiber.join(first)
        provider.state.gapMs = 0
      }))

    it.effect("a client that goes away does not stop the turn: it is stored once; resume replays from the first chunk", () =>
      Effect.gen(function*() {
        provider.state.pieces = ["one ", "two ", "three ", "four"]
        provider.state.gapMs = 150
        const base = yield* baseUrl
        const cut = yield* readEventStream(`${base}/api/agent/chat`, streamInit({ chatId: "s-away", messages: [user("u1", "count")] }), (c) => c.type === "text-delta")
        assert.strictEqual(streamedText(cut.chunks), "one ")
        const resumed = yield* readEventStream(`${base}/api/chats/s-away/stream`, { method: "GET" })
        assert.strictEqual(resumed.status, 200)
        assert.strictEqual(resumed.chunks[0]!.type, "start")
        assert.strictEqual(streamedText(resumed.chunks), "one two three four")
        assert.strictEqual(resumed.chunks[resumed.chunks.length - 1]!.type, "finish")
        const answers = (yield* transcriptOf("s-away")).filter((m) => m.role === "assistant")
        assert.deepStrictEqual(answers.map((m) => m.content), ["one two three four"])
        const idle = yield* request("/api/chats/s-away/stream")
        assert.strictEqual(idle.status, 204)
        provider.state.gapMs = 0
      }))

    it.effect("without a chatId the turn ends with its connection: the provider's call is cut when the client goes", () =>
      Effect.gen(function*() {
        provider.state.pieces = ["one ", "two ", "three ", "four"]
        provider.state.gapMs = 150
        const before = provider.state.interrupted
        const base = yield* baseUrl
        const cut = yield* readEventStream(`${base}/api/agent/chat`, streamInit({ messages: [user("u1", "count")] }), (c) => c.type === "text-delta")
        assert.strictEqual(streamedText(cut.chunks), "one ")
        yield* eventually(Effect.sync(() => provider.state.interrupted), (n) => n === before + 1, "the provider call cut")
        provider.state.gapMs = 0
      }))

    it.effect("a reader that stops reading holds the turn back in nothing: it ends and is stored while the reader sleeps", () =>
      Effect.gen(function*() {
        // Enough text to fill the socket's buffers many times over if the server pushed it regardless.
        provider.state.pieces = Array.from({ length: 400 }, (_, i) => `${i}`.padEnd(2_000, "."))
        provider.state.gapMs = 0
        const base = yield* baseUrl
        const reader = yield* Effect.promise(async () => {
          const response = await fetch(`${base}/api/agent/chat`, streamInit({ chatId: "s-slow", messages: [user("u1", "a lot")] }))
          const body = response.body!.getReader()
          await body.read()
          return body
        })
        const answers = yield* eventually(
          transcriptOf("s-slow").pipe(Effect.map((t) => t.filter((m) => m.role === "assistant"))),
          (a) => a.length === 1,
          "the answer stored while its reader does not read"
        )
        assert.strictEqual(answers[0]!.content.length, 400 * 2_000)
        yield* Effect.promise(() => reader.cancel())
      }))

    it.effect("a stop while a client call's input arrives ends that call with tool-input-error: the stream and the transcript agree", () =>
      Effect.gen(function*() {
        provider.state.pieces = ["Calling it."]
        provider.state.toolCall = true
        provider.state.argPieces = ["{\"asset", "Id\":", "\"a1\"}"]
        provider.state.gapMs = 300
        const base = yield* baseUrl
        let inputStarted = false
        const reading = yield* readEventStream(`${base}/api/agent/chat`, streamInit({ chatId: "s-stop-tool", messages: [user("u1", "transcribe")] }), (c) => {
          if (c.type === "tool-input-start") inputStarted = true
          return false
        }).pipe(Effect.forkChild)
        yield* eventually(Effect.sync(() => inputStarted), (started) => started, "the call's input arriving")
        assert.deepStrictEqual((yield* postJson("/api/chats/s-stop-tool/stop", {})).json, { stopped: true })
        const read = yield* Fiber.join(reading)
        provider.state.toolCall = false
        provider.state.argPieces = undefined
        provider.state.gapMs = 0
        const ended = read.chunks.find((c) => c.type === "tool-input-error")
        assert.deepInclude(ended, { type: "tool-input-error", toolCallId: "call_1", toolName: "transcribe_video" })
        assert.isUndefined(read.chunks.find((c) => c.type === "tool-input-available"))
        assert.strictEqual(read.chunks.at(-1)?.type, "finish")
        const [answer] = (yield* transcriptOf("s-stop-tool")).filter((m) => m.role === "assistant")
        assert.deepStrictEqual([answer!.content, answer!.toolCalls, answer!.metadata], ["Calling it.", undefined, { stopped: true }])
      }))

    it.effect("a JSON turn whose client goes away ends its followers' streams with an error that says so", () =>
      Effect.gen(function*() {
        provider.state.pieces = ["one ", "two ", "three"]
        provider.state.gapMs = 300
        const base = yield* baseUrl
        const asking = yield* Effect.promise((signal) =>
          fetch(`${base}/api/agent/chat`, { ...streamInit({ chatId: "s-json-gone", messages: [user("u1", "go")] }, { accept: "application/json" }), signal })
            .catch(() => undefined)
        ).pipe(Effect.forkChild)
        yield* streaming("s-json-gone")
        const following = yield* readEventStream(`${base}/api/chats/s-json-gone/stream`, { method: "GET" }).pipe(Effect.forkChild)
        yield* Effect.sleep("100 millis")
        yield* Fiber.interrupt(asking)
        const followed = yield* Fiber.join(following)
        provider.state.gapMs = 0
        const last = followed.chunks.at(-1)
        assert.strictEqual(last?.type, "error")
        assert.include(last?.type === "error" ? last.errorText : "", "the client that asked for it went away")
      }))

    it.effect("stop stores the partial answer with metadata.stopped and frees the chat at once", () =>
      Effect.gen(function*() {
        provider.state.pieces = Array.from({ length: 40 }, (_, i) => `w${i} `)
        provider.state.gapMs = 100
        const interruptedBefore = provider.state.interrupted
        const base = yield* baseUrl
        const reading = yield* readEventStream(`${base}/api/agent/chat`, streamInit({ chatId: "s-stop", messages: [user("u1", "go on")] })).pipe(Effect.forkChild)
        yield* streaming("s-stop")
        yield* Effect.sleep("250 millis")
        const stop = yield* postJson("/api/chats/s-stop/stop", {})
        assert.strictEqual(stop.status, 200)
        assert.deepStrictEqual(stop.json, { stopped: true })
        provider.state.gapMs = 0
        provider.state.pieces = ["next"]
        const next = yield* postJson("/api/agent/chat", { chatId: "s-stop", messages: [user("u2", "next")] })
        assert.strictEqual(next.status, 200)
        const read = yield* Fiber.join(reading)
        const finish = read.chunks[read.chunks.length - 1] as Extract<UiChunk, { type: "finish" }>
        assert.strictEqual(finish.type, "finish")
        assert.strictEqual(finish.messageMetadata?.stopped, true)
        const answers = (yield* transcriptOf("s-stop")).filter((m) => m.role === "assistant")
        assert.strictEqual(answers.length, 2)
        assert.deepStrictEqual(answers[0]!.metadata, { stopped: true })
        assert.strictEqual(answers[0]!.content, streamedText(read.chunks))
        assert.isTrue(answers[0]!.content.length > 0 && answers[0]!.content.length < 40 * 4)
        assert.strictEqual(provider.state.interrupted, interruptedBefore + 1)
        const again = yield* postJson("/api/chats/s-stop/stop", {})
        assert.deepStrictEqual(again.json, { stopped: false })
      }))
  })
})
