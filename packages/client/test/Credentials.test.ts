/**
 * Who a request acts for (docs/users.md), over real HTTP against a local
 * fake: `getToken` is asked before every request — the typed client's, a
 * streamed turn's, the fetch transport's, the upload's, `run()`'s — so a
 * product's short-lived JWTs are refreshed; `user` is sent as
 * `X-Switchboard-User`; a `getToken` that rejects fails the request unsent,
 * with a sentence, never a defect.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ChatRequest } from "@switchboard/domain"
import { Effect, Layer, Stream } from "effect"
import { ApiClient, CallerCredentials } from "../src/api/ApiClient.ts"
import type { ApiClientOptions } from "../src/api/ApiClient.ts"
import { describeApiFailure } from "../src/api/ApiFailure.ts"
import { MediaTranscriber } from "../src/api/MediaTranscriber.ts"
import { ChatTransport, ChatTransportError } from "../src/chat/ChatTransport.ts"
import { closeRunClients, run } from "../src/chat/Run.ts"
import type { RecordedRequest, Reply } from "./support/FakeServer.ts"
import { startFakeServer } from "./support/FakeServer.ts"
import { streamedReply, turnChunks } from "./support/FakeStream.ts"

const request: ChatRequest = {
  messages: [{ id: "m1", role: "user", content: "Hi", timestamp: 1 }],
  chatId: "chat_1"
}

/** `token-1`, `token-2`, …: a new token on every call, as a product's refresh would give. */
const tokenSequence = () => {
  let calls = 0
  return { getToken: () => Promise.resolve(`token-${++calls}`), calls: () => calls }
}

const bearers = (requests: ReadonlyArray<RecordedRequest>) => requests.map((r) => r.headers.authorization)

/** The fake's answers: a streamed or whole turn, a stop, a job listing, a transcription. */
const answer = (recorded: RecordedRequest): Reply => {
  if (recorded.path.startsWith("/api/jobs")) return { json: { jobs: [] } }
  if (recorded.path === "/api/media/transcriptions") return { json: { text: "hello" } }
  if (recorded.path.endsWith("/stop")) return { json: { stopped: false } }
  if (recorded.headers.accept === "text/event-stream") return streamedReply(turnChunks({ messageId: "srv_1", deltas: ["Hi"] }))
  return { json: { content: "Hi", toolCalls: [], messageId: "srv_1" } }
}

const apiClient = (options: ApiClientOptions) => Effect.service(ApiClient).pipe(Effect.provide(ApiClient.layer(options)))

const rejected = () => Promise.reject(new Error("session expired"))

describe("credentials: getToken per request, user, a getToken that rejects", () => {
  it.effect("the typed client asks getToken before each request and sends the user", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer(answer)
      const tokens = tokenSequence()
      const client = yield* apiClient({ baseUrl: server.url, getToken: tokens.getToken, user: "alice" })
      yield* client.jobs.list({ query: { chatId: "chat_1" } })
      yield* client.jobs.list({ query: { chatId: "chat_1" } })
      assert.deepStrictEqual(bearers(server.requests), ["Bearer token-1", "Bearer token-2"])
      assert.deepStrictEqual(server.requests.map((r) => r.headers["x-switchboard-user"]), ["alice", "alice"])
    }))

  it.effect("streamed turns and stops ask getToken each time, on the client and on the fetch transport", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer(answer)
      const tokens = tokenSequence()
      const options = { baseUrl: server.url, getToken: tokens.getToken }
      const client = yield* apiClient(options)
      const chunks = yield* Stream.runCollect(client.streamChat(request))
      assert.strictEqual(chunks[0]?.type, "start")
      yield* Stream.runCollect(client.streamChat(request))
      assert.isFalse(yield* client.stopTurn("chat_1"))

      const transport = yield* Effect.service(ChatTransport).pipe(Effect.provide(ChatTransport.layer(options)))
      yield* Stream.runCollect(transport.stream(request))
      yield* transport.send(request)
      assert.deepStrictEqual(bearers(server.requests), ["Bearer token-1", "Bearer token-2", "Bearer token-3", "Bearer token-4", "Bearer token-5"])
      assert.deepStrictEqual(server.requests.map((r) => r.path), [
        "/api/agent/chat",
        "/api/agent/chat",
        "/api/chats/chat_1/stop",
        "/api/agent/chat",
        "/api/agent/chat"
      ])
    }))

  it.effect("the transcription upload asks getToken too; a static token keeps working", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer(answer)
      const tokens = tokenSequence()
      const upload = { data: Uint8Array.from([1, 2, 3]), fileName: "a.mp4", mediaType: "video/mp4" }
      const transcriber = (options: ApiClientOptions) =>
        Effect.service(MediaTranscriber).pipe(Effect.provide(MediaTranscriber.layer(options)))
      assert.strictEqual(yield* (yield* transcriber({ baseUrl: server.url, getToken: tokens.getToken })).transcribe(upload), "hello")
      yield* (yield* transcriber({ baseUrl: server.url, token: "fixed" })).transcribe(upload)
      assert.deepStrictEqual(bearers(server.requests), ["Bearer token-1", "Bearer fixed"])
    }))

  it.effect("a getToken that rejects fails the request unsent, with a sentence, on every path", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer(answer)
      const options = { baseUrl: server.url, getToken: rejected }
      const client = yield* apiClient(options)

      const typed = yield* Effect.flip(client.jobs.list({ query: { chatId: "chat_1" } }))
      const typedFailure = yield* describeApiFailure(typed)
      assert.strictEqual(typedFailure.message, "could not get a token: session expired")

      const streamed = yield* Effect.flip(Stream.runCollect(client.streamChat(request)))
      assert.strictEqual(streamed._tag, "ApiTokenUnavailable")
      assert.strictEqual(streamed.message, "could not get a token: session expired")

      const transport = yield* Effect.service(ChatTransport).pipe(Effect.provide(ChatTransport.layer(options)))
      const sent = yield* Effect.flip(transport.send(request))
      assert.instanceOf(sent, ChatTransportError)
      assert.strictEqual(sent.message, "could not get a token: session expired")
      const lookedUp = yield* Effect.flip(transport.agent("default"))
      assert.strictEqual(lookedUp.message, "could not get a token: session expired")

      // A caller without types resolving something else is refused the same way, not sent as `Bearer undefined`.
      const untyped = yield* apiClient({ baseUrl: server.url, getToken: () => Promise.resolve(undefined as unknown as string) })
      const notString = yield* describeApiFailure(yield* Effect.flip(untyped.jobs.list({ query: { chatId: "chat_1" } })))
      assert.strictEqual(notString.message, "could not get a token: getToken gave undefined, not a string")

      assert.strictEqual(server.requests.length, 0)
    }))

  it.effect("CallerCredentials replaces the client's own for the requests of a fiber", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer(answer)
      const client = yield* apiClient({ baseUrl: server.url, token: "own" })
      yield* client.jobs.list({ query: { chatId: "chat_1" } })
      yield* client.jobs.list({ query: { chatId: "chat_1" } }).pipe(
        Effect.provideService(CallerCredentials, { token: "caller", user: "bob" })
      )
      assert.deepStrictEqual(bearers(server.requests), ["Bearer own", "Bearer caller"])
      assert.deepStrictEqual(server.requests.map((r) => r.headers["x-switchboard-user"]), [undefined, "bob"])
    }))

  it.effect("run() asks getToken before each request of the turn; runs with other credentials share the client", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer((recorded) => {
        const body = JSON.parse(recorded.body.toString("utf8")) as ChatRequest
        // One tool round, then the answer: two requests in one turn.
        const answered = body.messages.some((m) => m.role === "tool")
        const chunks = answered
          ? turnChunks({ messageId: "srv_2", deltas: ["done"] })
          : turnChunks({ messageId: "srv_1", toolCalls: [{ id: "c1", name: "lookup", args: {} }] })
        return streamedReply(chunks)
      })
      const tokens = tokenSequence()
      const lookup = { name: "lookup", description: "looks up", parameters: [], execute: () => "found" }

      const messages = yield* Effect.promise(() =>
        run([{ role: "user", content: "hi" }], null, { serverUrl: server.url, getToken: tokens.getToken, user: "alice", tools: [lookup] })
      )
      assert.strictEqual(messages.at(-1)?.content, "done")
      yield* Effect.promise(() =>
        run([{ role: "user", content: "hi" }], null, { serverUrl: server.url, token: "backend", user: "bob", tools: [lookup] })
      )
      assert.deepStrictEqual(bearers(server.requests), ["Bearer token-1", "Bearer token-2", "Bearer backend", "Bearer backend"])
      assert.deepStrictEqual(server.requests.map((r) => r.headers["x-switchboard-user"]), ["alice", "alice", "bob", "bob"])

      const refused = yield* Effect.promise(() =>
        run([{ role: "user", content: "hi" }], null, { serverUrl: server.url, getToken: rejected, tools: [lookup] }).then(
          () => undefined,
          (e: unknown) => e
        )
      )
      assert.instanceOf(refused, ChatTransportError)
      assert.strictEqual((refused as ChatTransportError).message, "could not get a token: session expired")
      assert.strictEqual(server.requests.length, 4)
    }).pipe(Effect.scoped, Effect.ensuring(Effect.promise(closeRunClients))))
})
