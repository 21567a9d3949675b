/**
 * Reading a streamed turn: the SSE reader over a body cut at every byte
 * (line ends, a character of several bytes and `[DONE]` split across reads),
 * and the ApiClient's streamed-turn routes against a local fake server.
 */
import { SSE_DONE, sseEvent, TurnInFlight } from "@switchboard/domain"
import type { ChatRequest, UiChunk } from "@switchboard/domain"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { ApiClient } from "../src/api/ApiClient.ts"
import { readUiChunks } from "../src/api/SseReader.ts"
import { chunksOfResponse } from "../src/chat/TurnChunks.ts"
import { startFakeServer } from "./support/FakeServer.ts"
import { gate, streamedReply, turnChunks } from "./support/FakeStream.ts"

const bodyOf = (pieces: ReadonlyArray<Uint8Array>) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const piece of pieces) controller.enqueue(piece)
      controller.close()
    }
  })

const read = (pieces: ReadonlyArray<Uint8Array>) => Stream.runCollect(readUiChunks(bodyOf(pieces), "GET test"))

const expected: ReadonlyArray<UiChunk> = [
  { type: "start", messageId: "srv_1" },
  { type: "text-delta", id: "t1", delta: "Grüße 👋 " },
  { type: "text-delta", id: "t1", delta: "multi-line" },
  { type: "text-delta", id: "t1", delta: "cr" },
  { type: "finish", messageMetadata: { usage: { inputTokens: 1, outputTokens: 2 } } }
]

// Every way the wire may differ from the plainest: a comment, CRLF, a chunk's JSON over two
// data lines, CR alone, a chunk type this client does not know, and bytes after [DONE].
const wire = [
  ": keep-alive\r\n\r\n",
  `data: ${JSON.stringify(expected[0])}\r\n\r\n`,
  `data: ${JSON.stringify(expected[1])}\n\n`,
  `data: {"type":"text-delta",\ndata: "id":"t1","delta":"multi-line"}\n\n`,
  `data: {"type":"reasoning-delta","id":"r1","delta":"hmm"}\n\n`,
  `data:${JSON.stringify(expected[3])}\r\r`,
  `: keep-alive\n\n`,
  `data: ${JSON.stringify(expected[4])}\n\n`,
  "data: [DONE]\n\n",
  "data: {not even json\n\n"
].join("")
const bytes = new TextEncoder().encode(wire)

describe("SSE reader", () => {
  it.effect("reads the chunks whatever the line ends, skipping comments, unknown types and what follows [DONE]", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* read([bytes]), expected)
    }))

  it.effect("the same chunks with the body cut at every byte boundary, and one byte per read", () =>
    Effect.gen(function*() {
      for (let cut = 1; cut < bytes.length; cut++) {
        const chunks = yield* read([bytes.subarray(0, cut), bytes.subarray(cut)])
        assert.deepStrictEqual(chunks, expected, `cut at byte ${cut}`)
      }
      const oneByOne = Array.from(bytes, (byte) => Uint8Array.of(byte))
      assert.deepStrictEqual(yield* read(oneByOne), expected)
    }))

  it.effect("a known chunk that is not its schema, and data that is not JSON, break the contract", () =>
    Effect.gen(function*() {
      const encode = (text: string) => [new TextEncoder().encode(text)]
      const missing = yield* Effect.flip(read(encode(`data: {"type":"text-delta","id":"t1"}\n\n`)))
      assert.strictEqual(missing._tag, "ApiContractMismatch")
      const garbage = yield* Effect.flip(read(encode(`data: {oops\n\n`)))
      assert.strictEqual(garbage._tag, "ApiContractMismatch")
      // A body that ends without [DONE] ends the chunks, whatever was read.
      assert.deepStrictEqual(yield* read(encode(`data: ${JSON.stringify(expected[0])}\n\n`)), [expected[0]])
    }))
})

const request: ChatRequest = {
  messages: [{ id: "m1", role: "user", content: "Hi", timestamp: 1 }],
  chatId: "chat_1"
}

const clientFor = (baseUrl: string, token?: string) =>
  Effect.service(ApiClient).pipe(Effect.provide(ApiClient.layer({ baseUrl, token })))

describe("ApiClient: the streamed turn's routes", () => {
  it.effect("streamChat POSTs with Accept: text/event-stream and yields each chunk as it arrives", () =>
    Effect.gen(function*() {
      const chunks = turnChunks({ messageId: "srv_1", deltas: ["Hel", "lo"] })
      const held = gate()
      const server = yield* startFakeServer(() => ({
        events: (async function*() {
          // Up to the first delta, then nothing until the client has shown that it read it.
          for (const chunk of chunks.slice(0, 4)) yield sseEvent(chunk)
          await held.opened
          for (const chunk of chunks.slice(4)) yield sseEvent(chunk)
          yield SSE_DONE
        })()
      }))
      const client = yield* clientFor(server.url, "tok")
      const received: Array<UiChunk> = []
      yield* Stream.runForEach(client.streamChat(request), (chunk) =>
        Effect.sync(() => {
          received.push(chunk)
          if (chunk.type === "text-delta") held.open()
        }))
      assert.deepStrictEqual(received, chunks)
      const [recorded] = server.requests
      assert.strictEqual(recorded?.method, "POST")
      assert.strictEqual(recorded?.path, "/api/agent/chat")
      assert.strictEqual(recorded?.headers.accept, "text/event-stream")
      assert.strictEqual(recorded?.headers.authorization, "Bearer tok")
      assert.deepStrictEqual(JSON.parse(recorded?.body.toString("utf8") ?? ""), request)
    }))

  it.effect("an error before the stream is the usual ApiError; a JSON answer reads as its chunks", () =>
    Effect.gen(function*() {
      const busy = yield* startFakeServer(() => ({
        status: 409,
        json: { error: "A turn for chat \"chat_1\" is already in flight", code: "turn_in_flight", chatId: "chat_1" }
      }))
      const error = yield* Effect.flip(Stream.runCollect((yield* clientFor(busy.url)).streamChat(request)))
      assert.instanceOf(error, TurnInFlight)

      const answer = { content: "Hello!", messageId: "srv_j", toolCalls: [{ id: "c1", name: "transcribe_video", args: {} }] }
      const json = yield* startFakeServer(() => ({ json: answer }))
      assert.deepStrictEqual(yield* Stream.runCollect((yield* clientFor(json.url)).streamChat(request)), chunksOfResponse(answer))

      const down = yield* clientFor("http://127.0.0.1:1")
      assert.strictEqual((yield* Effect.flip(Stream.runCollect(down.streamChat(request))))._tag, "ApiUnreachable")
    }))

  it.effect("stopTurn and resumeTurn (204: nothing runs)", () =>
    Effect.gen(function*() {
      const chunks = turnChunks({ messageId: "srv_r", deltas: ["again"] })
      let running = true
      const server = yield* startFakeServer((recorded) => {
        if (recorded.path === "/api/chats/chat%20one/stop") {
          const stopped = running
          running = false
          return { json: { stopped } }
        }
        if (recorded.path === "/api/chats/chat%20one/stream") return running ? streamedReply(chunks) : { status: 204 }
        return { status: 404, json: { error: "not found", code: "not_found" } }
      })
      const client = yield* clientFor(server.url)
      assert.deepStrictEqual(yield* Stream.runCollect(client.resumeTurn("chat one")), chunks)
      assert.strictEqual(server.requests[0]?.headers.accept, "text/event-stream")
      assert.isTrue(yield* client.stopTurn("chat one"))
      assert.isFalse(yield* client.stopTurn("chat one"))
      assert.deepStrictEqual(yield* Stream.runCollect(client.resumeTurn("chat one")), [])
      assert.deepStrictEqual(server.requests.map((r) => r.method), ["GET", "POST", "POST", "GET"])

      const missing = yield* Effect.flip(client.stopTurn("elsewhere"))
      assert.strictEqual(missing._tag, "NotFound")
    }))
})
