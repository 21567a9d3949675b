import type { ChatRequest } from "@switchboard/domain"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import * as net from "node:net"
import { ChatTransport } from "../src/chat/ChatTransport.ts"
import { ApiClient } from "../src/api/ApiClient.ts"
import type { ApiClientOptions } from "../src/api/ApiClient.ts"
import { makeOrchestrator } from "../src/chat/Orchestrator.ts"
import { ToolRegistry } from "../src/tools/ToolRegistry.ts"
import { makeStores } from "./support/Fakes.ts"
import { startFakeServer } from "./support/FakeServer.ts"
import type { Reply } from "./support/FakeServer.ts"
import { streamedReply, turnChunks } from "./support/FakeStream.ts"

const request: ChatRequest = {
  messages: [{ id: "m1", role: "user", content: "Hi", timestamp: 1 }],
  context: { projectId: "p1", activeSceneId: null, mediaAssets: [], playbackTimeMs: 0 },
  chatId: "chat_1"
}

// Both implementations must give the same answers and the same errors.
const implementations: ReadonlyArray<readonly [string, (options: ApiClientOptions) => Layer.Layer<ChatTransport>]> = [
  ["fetch (production)", ChatTransport.layer],
  ["typed HttpApi client", (options) => ChatTransport.layerNoDeps.pipe(Layer.provide(ApiClient.layer(options)))]
]

/** A port nothing listens on. */
const closedPort = Effect.promise(() =>
  new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo
      probe.close(() => resolve(port))
    })
  })
)

for (const [implementation, layerFor] of implementations) {
  const send = (baseUrl: string, token?: string) =>
    Effect.gen(function*() {
      const transport = yield* ChatTransport
      return yield* transport.send(request)
    }).pipe(Effect.provide(layerFor({ baseUrl, token })))

  const failureFor = (reply: Reply) =>
    Effect.gen(function*() {
      const server = yield* startFakeServer(() => reply)
      return yield* send(server.url).pipe(Effect.flip)
    })

  describe(`ChatTransport over HTTP: ${implementation}`, () => {
    it.effect("POSTs { messages, context, chatId } to /api/agent/chat with the bearer token", () =>
      Effect.gen(function*() {
        const server = yield* startFakeServer(() => ({
          json: { content: "Hello!", toolCalls: [{ id: "c1", name: "transcribe_video", args: {} }], messageId: "srv_1" }
        }))
        const response = yield* send(server.url, "tok")
        assert.deepStrictEqual(response, {
          content: "Hello!",
          toolCalls: [{ id: "c1", name: "transcribe_video", args: {} }],
          messageId: "srv_1"
        })
        const [recorded] = server.requests
        assert.strictEqual(recorded?.method, "POST")
        assert.strictEqual(recorded?.path, "/api/agent/chat")
        assert.strictEqual(recorded?.headers.authorization, "Bearer tok")
        assert.deepStrictEqual(JSON.parse(recorded?.body.toString("utf8") ?? ""), request)
      }))

    it.effect("declared API errors keep the server's sentence, status and code", () =>
      Effect.gen(function*() {
        const provider = yield* failureFor({ status: 502, json: { error: "LLM provider error", code: "provider_error" } })
        assert.strictEqual(provider.message, "LLM provider error (provider_error)")
        assert.strictEqual(provider.status, 502)
        assert.strictEqual(provider.code, "provider_error")

        // The reason a provider failed, when the server names it (a newer server always does).
        const rejected = yield* failureFor({ status: 502, json: { error: "LLM provider error", code: "provider_error", reason: "status_401" } })
        assert.strictEqual(rejected.message, "LLM provider error (provider_error: status_401)")
        assert.strictEqual(rejected.reason, "status_401")

        const notConfigured = yield* failureFor({
          status: 502,
          json: {
            error: "LLM provider not configured: missing LLM_API_KEY",
            code: "provider_not_configured",
            missing: ["LLM_API_KEY"]
          }
        })
        assert.include(notConfigured.message, "missing LLM_API_KEY")
        assert.strictEqual(notConfigured.code, "provider_not_configured")

        const inFlight = yield* failureFor({
          status: 409,
          json: { error: "a turn is already running for this chat", code: "turn_in_flight", chatId: "chat_1" }
        })
        assert.strictEqual(inFlight.code, "turn_in_flight")
        assert.strictEqual(inFlight.status, 409)

        const unauthenticated = yield* failureFor({ status: 401, json: { error: "missing or invalid bearer token", code: "unauthenticated" } })
        assert.strictEqual(unauthenticated.code, "unauthenticated")
        assert.include(unauthenticated.message, "bearer token")
      }))

    it.effect("undeclared statuses, malformed answers and a dead server get readable messages", () =>
      Effect.gen(function*() {
        const notFound = yield* failureFor({ status: 404, json: { error: "No route for POST /api/agent/chat", code: "not_found" } })
        assert.strictEqual(notFound.status, 404)
        assert.include(notFound.message, "No route")

        const html = yield* failureFor({ status: 500, body: "<html>oops</html>", headers: { "content-type": "text/html" } })
        assert.strictEqual(html.status, 500)
        assert.include(html.message, "HTTP 500")

        const malformed = yield* failureFor({ json: { content: 42 } })
        assert.include(malformed.message, "does not match the API")

        const port = yield* closedPort
        const down = yield* send(`http://127.0.0.1:${port}`).pipe(Effect.flip)
        assert.include(down.message, "cannot reach the server")
        assert.isUndefined(down.status)
      }))

    it.effect("streams a turn's chunks and stops a chat's turn; their errors are the same ChatTransportError", () =>
      Effect.gen(function*() {
        const chunks = turnChunks({ messageId: "srv_1", deltas: ["Hel", "lo"] })
        const server = yield* startFakeServer((recorded) =>
          recorded.path === "/api/chats/chat_1/stop"
            ? { json: { stopped: true } }
            : recorded.path === "/api/chats/busy/stop"
            ? { status: 401, json: { error: "missing or invalid bearer token", code: "unauthenticated" } }
            : streamedReply(chunks)
        )
        const transport = yield* Effect.service(ChatTransport).pipe(Effect.provide(layerFor({ baseUrl: server.url, token: "tok" })))
        assert.deepStrictEqual(yield* Stream.runCollect(transport.stream(request)), chunks)
        assert.isTrue(yield* transport.stop("chat_1"))
        const refused = yield* Effect.flip(transport.stop("busy"))
        assert.strictEqual(refused.status, 401)
        assert.strictEqual(refused.code, "unauthenticated")
        assert.isTrue(server.requests.every((r) => r.headers.authorization === "Bearer tok"))

        const port = yield* closedPort
        const down = yield* Effect.service(ChatTransport).pipe(Effect.provide(layerFor({ baseUrl: `http://127.0.0.1:${port}` })))
        const unreachable = yield* Effect.flip(Stream.runCollect(down.stream(request)))
        assert.include(unreachable.message, "cannot reach the server")
      }))

    it.effect("a busy replica's 503 overloaded is busy with its retryAfter (the body's, else Retry-After), whole or streamed", () =>
      Effect.gen(function*() {
        const sentence = "Too many turns in flight on this replica; retry in 3 s"
        const overloaded: Reply = { status: 503, json: { error: sentence, code: "overloaded", retryAfter: 3 }, headers: { "retry-after": "3" } }
        const busy = yield* failureFor(overloaded)
        assert.strictEqual(busy.message, "Switchboard is busy (too many turns at once); retry in 3 s")
        assert.deepStrictEqual([busy.status, busy.code, busy.retryAfter], [503, "overloaded", 3])
        assert.notInclude(busy.message, "provider")

        const headerOnly = yield* failureFor({ status: 503, json: { error: sentence, code: "overloaded" }, headers: { "retry-after": "9" } })
        assert.strictEqual(headerOnly.message, "Switchboard is busy (too many turns at once); retry in 9 s")
        assert.strictEqual(headerOnly.retryAfter, 9)

        // A streamed turn refused before its stream: the same JSON answer, read before any chunk.
        const server = yield* startFakeServer(() => ({ status: 503, json: { error: sentence, code: "overloaded" }, headers: { "retry-after": "4" } }))
        const transport = yield* Effect.service(ChatTransport).pipe(Effect.provide(layerFor({ baseUrl: server.url })))
        const refused = yield* Effect.flip(Stream.runCollect(transport.stream(request)))
        assert.strictEqual(refused.message, "Switchboard is busy (too many turns at once); retry in 4 s")
        assert.deepStrictEqual([refused.status, refused.code, refused.retryAfter], [503, "overloaded", 4])
        assert.strictEqual(server.requests[0]?.headers.accept, "text/event-stream")
      }))

    it.effect("through the orchestrator, a busy replica's answer lands in the chat store as busy, with its retryAfter", () =>
      Effect.gen(function*() {
        const server = yield* startFakeServer(() => ({
          status: 503,
          json: { error: "Too many turns in flight on this replica", code: "overloaded", retryAfter: 3 },
          headers: { "retry-after": "3" }
        }))
        for (const streaming of [true, false]) {
          const stores = makeStores()
          stores.chatStore.getState().addMessage({ role: "user", content: "Hi" })
          const error = yield* makeOrchestrator({ ...stores, registry: new ToolRegistry(), streaming }).run().pipe(
            Effect.provide(layerFor({ baseUrl: server.url })),
            Effect.flip
          )
          assert(error._tag === "ChatTransportError")
          assert.strictEqual(error.retryAfter, 3)
          const state = stores.chatStore.getState()
          assert.strictEqual(state.error, "Switchboard is busy (too many turns at once); retry in 3 s")
          assert.deepStrictEqual(state.failure, {
            message: "Switchboard is busy (too many turns at once); retry in 3 s",
            status: 503,
            code: "overloaded",
            retryAfter: 3
          })
          assert.isFalse(state.loading)
          assert.strictEqual(stores.agentStore.getState().status, "error")
          // The user's message stays for a retry; nothing else was added.
          assert.deepStrictEqual(state.messages.map((m) => m.role), ["user"])
        }
      }))

    it.effect("through the orchestrator, an API error lands in chatStore.error with status error", () =>
      Effect.gen(function*() {
        const server = yield* startFakeServer(() => ({ status: 502, json: { error: "LLM provider error", code: "provider_error" } }))
        const stores = makeStores()
        stores.chatStore.getState().addMessage({ role: "user", content: "Hi" })
        const error = yield* makeOrchestrator({ ...stores, registry: new ToolRegistry() }).run().pipe(
          Effect.provide(layerFor({ baseUrl: server.url })),
          Effect.flip
        )
        assert(error._tag === "ChatTransportError")
        assert.strictEqual(error.status, 502)
        assert.strictEqual(stores.chatStore.getState().error, "LLM provider error (provider_error)")
        assert.deepStrictEqual(stores.chatStore.getState().failure, {
          message: "LLM provider error (provider_error)",
          status: 502,
          code: "provider_error"
        })
        assert.isFalse(stores.chatStore.getState().loading)
        assert.strictEqual(stores.agentStore.getState().status, "error")
      }))
  })
}
