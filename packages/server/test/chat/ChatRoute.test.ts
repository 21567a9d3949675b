/**
 * POST /api/agent/chat and the transcript route, over real HTTP on an
 * ephemeral port, with a programmable provider adapter.
 */
import { assert, describe, layer } from "@effect/vitest"
import type { ChatMessage } from "@switchboard/domain"
import { clientToolSchemas } from "@switchboard/domain"
import { Deferred, Effect, Fiber } from "effect"
import { ProviderError } from "@switchboard/providers"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { layerTestServer, postJson, request } from "../support/TestServer.ts"

const user = (id: string, content: string): ChatMessage => ({ id, role: "user", content, timestamp: 1_700_000_000_000 })
const context = {
  projectId: "p1",
  activeSceneId: "scene-2",
  mediaAssets: [{ id: "v1", name: "Intro.mp4", kind: "video", uri: "file:///tmp/intro.mp4", durationMs: 65_000 }],
  playbackTimeMs: 12_000
}

const fake = makeFakeProvider()

/** 12 MiB sent chunked (no Content-Length): the body limit stops the read with a JSON 413. */
const chunkedOverLimitIs413 = Effect.gen(function*() {
  const chunk = new TextEncoder().encode("x".repeat(1024 * 1024))
  let sent = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent++ < 12) controller.enqueue(chunk)
      else controller.close()
    }
  })
  const res = yield* request("/api/agent/chat", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
    duplex: "half"
  } as RequestInit)
  assert.strictEqual(res.status, 413)
  assert.strictEqual(res.json.code, "payload_too_large")
})

describe("chat route", () => {
  layer(layerTestServer(fake.layer), { excludeTestServices: true })("over HTTP", (it) => {
    it.effect("Valid request returns provider response", () =>
      Effect.gen(function*() {
        fake.answerWith(() => Effect.succeed({
          content: "Let me transcribe that.",
          toolCalls: [{ id: "call_1", name: "transcribe_video", args: { assetId: "v1" } }]
        }))
        const res = yield* postJson("/api/agent/chat", { messages: [user("u1", "transcribe the intro")], context })
        assert.strictEqual(res.status, 200)
        assert.strictEqual(res.json.content, "Let me transcribe that.")
        assert.deepStrictEqual(res.json.toolCalls, [{ id: "call_1", name: "transcribe_video", args: { assetId: "v1" } }])
        assert.isString(res.json.messageId)

        const params = fake.calls.at(-1)!
        assert.deepStrictEqual(params.toolSchemas, clientToolSchemas, "tool schemas from the registry, internal format")
        assert.include(params.systemPrompt, "p1")
        assert.include(params.systemPrompt, "Intro.mp4")
        assert.deepStrictEqual(params.messages.map((m) => m.content), ["transcribe the intro"])
      }))

    it.effect("a final answer has no toolCalls", () =>
      Effect.gen(function*() {
        fake.answerWith(() => Effect.succeed({ content: "Hello!" }))
        const res = yield* postJson("/api/agent/chat", { messages: [user("u1", "hi")] })
        assert.strictEqual(res.status, 200)
        assert.strictEqual(res.json.content, "Hello!")
        assert.isTrue(res.json.toolCalls === undefined || res.json.toolCalls.length === 0)
        assert.include(fake.calls.at(-1)!.systemPrompt, "No project context")
      }))

    it.effect("Invalid request returns 400", () =>
      Effect.gen(function*() {
        const before = fake.calls.length
        const res = yield* postJson("/api/agent/chat", {})
        assert.strictEqual(res.status, 400)
        assert.strictEqual(res.json.code, "invalid_request")
        assert.include(res.json.error, "messages")
        assert.strictEqual(fake.calls.length, before, "the provider is not called")
      }))

    it.effect("400 names the offending path: wrong type, missing field, NUL, bad JSON", () =>
      Effect.gen(function*() {
        const wrongRole = yield* postJson("/api/agent/chat", { messages: [{ ...user("u1", "x"), role: "bot" }] })
        assert.strictEqual(wrongRole.status, 400)
        assert.include(wrongRole.json.error, "messages[0].role")

        const noTimestamp = yield* postJson("/api/agent/chat", { messages: [{ id: "u1", role: "user", content: "x" }] })
        assert.strictEqual(noTimestamp.status, 400)
        assert.include(noTimestamp.json.error, "messages[0].timestamp")

        const nul = yield* postJson("/api/agent/chat", { messages: [user("u1", "a\u0000b")] })
        assert.strictEqual(nul.status, 400)
        assert.include(nul.json.error, "messages[0].content")

        const nulDeep = yield* postJson("/api/agent/chat", { messages: [{ ...user("u1", "x"), metadata: { a: [{ b: "\u0000" }] } }] })
        assert.strictEqual(nulDeep.status, 400)
        assert.include(nulDeep.json.error, "messages[0].metadata.a[0].b")

        const toolWithoutResult = yield* postJson("/api/agent/chat", { messages: [{ ...user("t1", "x"), role: "tool" }] })
        assert.strictEqual(toolWithoutResult.status, 400)
        assert.include(toolWithoutResult.json.error, "toolResult")

        const badContext = yield* postJson("/api/agent/chat", { messages: [user("u1", "x")], context: { ...context, mediaAssets: [{ id: "a" }] } })
        assert.strictEqual(badContext.status, 400)
        assert.include(badContext.json.error, "context.mediaAssets[0]")

        const badJson = yield* postJson("/api/agent/chat", "{\"messages\": [")
        assert.strictEqual(badJson.status, 400)
        assert.strictEqual(badJson.json.code, "invalid_request")

        const deep = `{"messages":[{"id":"1","role":"user","content":"x","timestamp":1,"metadata":${"{\"a\":".repeat(50_000)}1${"}".repeat(50_000)}}]}`
        const tooDeep = yield* postJson("/api/agent/chat", deep)
        assert.strictEqual(tooDeep.status, 400, "deep nesting is refused, not a stack overflow")
        assert.include(tooDeep.json.error, "deeper than 64")

        for (const body of ["null", "[]", "\"text\"", "{\"messages\":\"x\"}", "{\"messages\":[]}"]) {
          const res = yield* postJson("/api/agent/chat", body)
          assert.strictEqual(res.status, 400, body)
          assert.strictEqual(res.json.code, "invalid_request", body)
        }

        const badChatId = yield* postJson("/api/agent/chat", { messages: [user("u1", "x")], chatId: "has space" })
        assert.strictEqual(badChatId.status, 400)
        assert.include(badChatId.json.error, "chatId")
      }))

    it.effect("Provider error returns 502", () =>
      Effect.gen(function*() {
        fake.answerWith(() => Effect.fail(new ProviderError({ reason: "Status", status: 401, message: "401 invalid api key" })))
        const res = yield* postJson("/api/agent/chat", { messages: [user("u1", "hi")] })
        assert.strictEqual(res.status, 502)
        assert.deepStrictEqual(res.json, { error: "LLM provider error", code: "provider_error", reason: "status_401" })
      }))

    it.effect("a provider that is not configured answers 502 naming what is missing", () =>
      Effect.gen(function*() {
        fake.answerWith(() => Effect.fail(new ProviderError({ reason: "NotConfigured", message: "missing", missing: ["LLM_API_KEY"] })))
        const res = yield* postJson("/api/agent/chat", { messages: [user("u1", "hi")] })
        assert.strictEqual(res.status, 502)
        assert.deepStrictEqual(res.json, {
          error: "LLM provider not configured: missing LLM_API_KEY",
          code: "provider_not_configured",
          missing: ["LLM_API_KEY"]
        })
      }))

    it.effect("an unexpected defect is a JSON 500 without a stack trace", () =>
      Effect.gen(function*() {
        fake.answerWith(() => Effect.die(new Error("secret internals at line 42")))
        const res = yield* postJson("/api/agent/chat", { messages: [user("u1", "hi")] })
        assert.strictEqual(res.status, 500)
        assert.deepStrictEqual(res.json, { error: "Internal server error", code: "internal_error" })
        assert.notInclude(res.text, "secret internals")
      }))

    it.effect("with chatId the turn is persisted write-ahead and the transcript is served", () =>
      Effect.gen(function*() {
        fake.answerWith(() => Effect.succeed({ content: "", toolCalls: [{ id: "call_9", name: "transcribe_video", args: {} }] }))
        const first = yield* postJson("/api/agent/chat", { chatId: "chat-persist", messages: [user("u1", "transcribe")] })
        assert.strictEqual(first.status, 200)

        const history: Array<ChatMessage> = [
          user("u1", "transcribe"),
          { id: first.json.messageId, role: "assistant", content: "", toolCalls: first.json.toolCalls, timestamp: 2 },
          { id: "tool-1", role: "tool", content: "hello world", toolResult: { toolCallId: "call_9", name: "transcribe_video", result: { text: "hello world" } }, timestamp: 3 }
        ]
        fake.answerWith(() => Effect.succeed({ content: "It says hello world." }))
        const second = yield* postJson("/api/agent/chat", { chatId: "chat-persist", messages: history })
        assert.strictEqual(second.status, 200)

        const transcript = yield* request("/api/chats/chat-persist/messages")
        assert.strictEqual(transcript.status, 200)
        const messages: Array<ChatMessage> = transcript.json.messages
        assert.deepStrictEqual(messages.map((m) => [m.role, m.id]), [
          ["user", "u1"],
          ["assistant", first.json.messageId],
          ["tool", "tool-1"],
          ["assistant", second.json.messageId]
        ], "re-sent history is not duplicated; the server's ids are kept")
        assert.deepStrictEqual(messages[1]!.toolCalls, [{ id: "call_9", name: "transcribe_video", args: {} }])
        assert.strictEqual(messages[3]!.content, "It says hello world.")
      }))

    it.effect("a failed provider call loses nothing the user sent", () =>
      Effect.gen(function*() {
        fake.answerWith(() => Effect.fail(new ProviderError({ reason: "Network", message: "ECONNREFUSED" })))
        const res = yield* postJson("/api/agent/chat", { chatId: "chat-wal", messages: [user("u1", "keep me")] })
        assert.strictEqual(res.status, 502)
        const transcript = yield* request("/api/chats/chat-wal/messages")
        assert.deepStrictEqual(transcript.json.messages.map((m: ChatMessage) => m.content), ["keep me"])
        fake.answerWith(() => Effect.succeed({ content: "retried" }))
        const retry = yield* postJson("/api/agent/chat", { chatId: "chat-wal", messages: [user("u1", "keep me")] })
        assert.strictEqual(retry.status, 200, "the failed turn released the chat")
      }))

    it.effect("a second turn for the same chat while one is in flight answers 409", () =>
      Effect.gen(function*() {
        const entered = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        fake.answerWith(() =>
          Deferred.succeed(entered, undefined).pipe(
            Effect.andThen(Deferred.await(release)),
            Effect.as({ content: "slow answer" })
          )
        )
        const slow = yield* Effect.forkChild(postJson("/api/agent/chat", { chatId: "chat-busy", messages: [user("u1", "one")] }))
        yield* Deferred.await(entered)

        const busy = yield* postJson("/api/agent/chat", { chatId: "chat-busy", messages: [user("u1", "one"), user("u2", "two")] })
        assert.strictEqual(busy.status, 409)
        assert.strictEqual(busy.json.code, "turn_in_flight")

        const otherChat = yield* Effect.forkChild(postJson("/api/agent/chat", { chatId: "chat-free", messages: [user("u1", "x")] }))
        yield* Deferred.succeed(release, undefined)
        assert.strictEqual((yield* Fiber.join(slow)).status, 200)
        assert.strictEqual((yield* Fiber.join(otherChat)).status, 200, "other chats are never blocked")

        fake.answerWith(() => Effect.succeed({ content: "next" }))
        const after = yield* postJson("/api/agent/chat", { chatId: "chat-busy", messages: [user("u1", "one"), user("u3", "three")] })
        assert.strictEqual(after.status, 200)
        const transcript = yield* request("/api/chats/chat-busy/messages")
        assert.notInclude(transcript.json.messages.map((m: ChatMessage) => m.id), "u2", "the refused turn persisted nothing")
      }))

    it.effect("transcript of an unknown chat is 404", () =>
      Effect.gen(function*() {
        const res = yield* request("/api/chats/nobody/messages")
        assert.strictEqual(res.status, 404)
        assert.strictEqual(res.json.code, "chat_not_found")
      }))

    it.effect("413 over 10 MiB, 415 for another content type, 404 and 405 — all JSON", () =>
      Effect.gen(function*() {
        const big = JSON.stringify({ messages: [user("u1", "x".repeat(11 * 1024 * 1024))] })
        const tooLarge = yield* postJson("/api/agent/chat", big)
        assert.strictEqual(tooLarge.status, 413)
        assert.strictEqual(tooLarge.json.code, "payload_too_large")

        const text = yield* request("/api/agent/chat", { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" })
        assert.strictEqual(text.status, 415)
        assert.strictEqual(text.json.code, "unsupported_media_type")

        const missing = yield* request("/api/nothing-here")
        assert.strictEqual(missing.status, 404)
        assert.strictEqual(missing.json.code, "not_found")

        const wrongMethod = yield* request("/api/agent/chat")
        assert.strictEqual(wrongMethod.status, 405)
        assert.strictEqual(wrongMethod.json.code, "method_not_allowed")
        assert.strictEqual(wrongMethod.headers.get("allow"), "POST, OPTIONS")

        for (const res of [tooLarge, text, missing, wrongMethod]) assert.include(res.contentType, "application/json")
      }))

    it.effect("without CORS_ORIGINS no CORS header is sent, preflight or not", () =>
      Effect.gen(function*() {
        const origin = "https://app.example"
        const preflight = yield* request("/api/agent/chat", {
          method: "OPTIONS",
          headers: { origin, "access-control-request-method": "POST" }
        })
        assert.strictEqual(preflight.status, 204)
        const answer = yield* postJson("/api/agent/chat", { messages: [user("u1", "hi")] }, { origin })
        assert.strictEqual(answer.status, 200)
        for (const res of [preflight, answer]) {
          for (const name of res.headers.keys()) assert.notMatch(name, /^access-control-/, name)
        }
      }))

    it.effect("a chunked body over 10 MiB is cut off with 413", () => chunkedOverLimitIs413)

    it.effect("transcriptions: multipart upload reaches the configured transcriber", () =>
      Effect.gen(function*() {
        const form = new FormData()
        form.append("file", new Blob([new Uint8Array([1, 2, 3, 4, 5])], { type: "video/mp4" }), "clip.mp4")
        form.append("language", "en")
        const res = yield* request("/api/media/transcriptions", { method: "POST", body: form })
        assert.strictEqual(res.status, 200)
        assert.deepStrictEqual(res.json, { text: "transcript of clip.mp4 (5 bytes)" })
        const seen = fake.transcriptions.at(-1)!
        assert.strictEqual(seen.language, "en")
        assert.deepStrictEqual([...seen.data], [1, 2, 3, 4, 5])

        const noFile = new FormData()
        noFile.append("language", "en")
        const missing = yield* request("/api/media/transcriptions", { method: "POST", body: noFile })
        assert.strictEqual(missing.status, 400)
        assert.include(missing.json.error, "file")
      }))

    it.effect("health, readiness, OpenAPI and docs", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* request("/healthz")).status, 200)
        const ready = yield* request("/readyz")
        assert.strictEqual(ready.status, 200)
        assert.strictEqual(ready.json.status, "ready")
        const openapi = yield* request("/openapi.json")
        assert.strictEqual(openapi.status, 200)
        assert.match(openapi.json.openapi, /^3\./)
        assert.property(openapi.json.paths, "/api/agent/chat")
        assert.property(openapi.json.paths, "/api/chats/{chatId}/messages")
        const docs = yield* request("/docs")
        assert.strictEqual(docs.status, 200)
        assert.include(docs.contentType, "text/html")
      }))
  })

  layer(layerTestServer(makeFakeProvider().layer, { CHAT_TOKEN: "s3cret-token" }), { excludeTestServices: true })("with CHAT_TOKEN", (it) => {
    it.effect("/api/* needs the bearer token; health does not", () =>
      Effect.gen(function*() {
        const body = { messages: [user("u1", "hi")] }
        const none = yield* postJson("/api/agent/chat", body)
        assert.strictEqual(none.status, 401)
        assert.strictEqual(none.json.code, "unauthenticated")
        const wrong = yield* postJson("/api/agent/chat", body, { authorization: "Bearer nope" })
        assert.strictEqual(wrong.status, 401)
        const right = yield* postJson("/api/agent/chat", body, { authorization: "Bearer s3cret-token" })
        assert.strictEqual(right.status, 200)
        assert.strictEqual((yield* request("/api/chats/x/messages")).status, 401)
        assert.strictEqual((yield* request("/api/jobs?chatId=x")).status, 401)
        assert.strictEqual((yield* request("/api/jobs?chatId=x", { headers: { authorization: "Bearer s3cret-token" } })).status, 200)
        assert.strictEqual((yield* request("/healthz")).status, 200)
      }))
  })

  // Served without the server's limit (BodyLimitLive), as another caller of makeApp might: the JSON error layer's own.
  layer(layerTestServer(makeFakeProvider().layer, {}, { withoutBodyLimit: true }), { excludeTestServices: true })("without the server's body limit", (it) => {
    it.effect("a chunked body over 10 MiB is still cut off with 413", () => chunkedOverLimitIs413)
  })
})
