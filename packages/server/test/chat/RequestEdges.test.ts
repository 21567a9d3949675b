/**
 * The shell's edges: hostile or unusual requests a fuzzer
 * found, each answered at once with the contract's JSON error — over real
 * HTTP, raw sockets where `fetch` would not send the bytes.
 */
import { assert, describe, layer } from "@effect/vitest"
import type { ChatMessage } from "@switchboard/domain"
import { Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { rawPost, rawRequest } from "../support/RawSocket.ts"
import { baseUrl, postJson, request } from "../support/TestServer.ts"
import { layerTestServer } from "../support/TestServer.ts"

const user = (id: string, content: string): ChatMessage => ({ id, role: "user", content, timestamp: 1 })

const multipart = (boundary: string, parts: ReadonlyArray<{ headers: string; data: string }>) =>
  parts.map((p) => `--${boundary}\r\n${p.headers}\r\n\r\n${p.data}\r\n`).join("") + `--${boundary}--\r\n`

const rawMultipart = (boundary: string, body: string) =>
  [
    "POST /api/media/transcriptions HTTP/1.1",
    "Host: 127.0.0.1",
    `Content-Type: multipart/form-data; boundary=${boundary}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    "Connection: close",
    "",
    body
  ].join("\r\n")

const fake = makeFakeProvider()
const ORIGINS = "https://app.example, https://admin.example"

describe("request edges", () => {
  layer(layerTestServer(fake.layer, { CORS_ORIGINS: ORIGINS }), { excludeTestServices: true })("defaults", (it) => {
    it.effect("a lone UTF-16 surrogate anywhere is a 400 naming the path, and creates no chat", () =>
      Effect.gen(function*() {
        const cases: ReadonlyArray<[string, ChatMessage, string]> = [
          ["content", user("u1", "x\ud800"), "messages[0].content"],
          ["id", user("u\udc00", "x"), "messages[0].id"],
          ["metadata key", { ...user("u1", "x"), metadata: { ["k\ud83d"]: 1 } }, "messages[0].metadata"],
          ["metadata value", { ...user("u1", "x"), metadata: { a: { b: ["ok", "\udfff"] } } }, "messages[0].metadata.a.b[1]"],
          ["tool call args", {
            id: "a1", role: "assistant", content: "", timestamp: 1,
            toolCalls: [{ id: "c1", name: "transcribe_video", args: { clipId: "\ud800\ud800" } }]
          }, "messages[0].toolCalls[0].args.clipId"],
          ["part text", { ...user("u1", "x"), parts: [{ type: "text", text: "\ud800" }] }, "messages[0].parts[0]"]
        ]
        for (const [what, message, path] of cases) {
          const chatId = `surrogate-${what.replace(/ /g, "-")}`
          const res = yield* postJson("/api/agent/chat", { chatId, messages: [message] })
          assert.strictEqual(res.status, 400, `${what}: ${res.text}`)
          assert.strictEqual(res.json.code, "invalid_request", what)
          assert.include(res.json.error, path, what)
          assert.include(res.json.error, "surrogate", what)
          const transcript = yield* request(`/api/chats/${chatId}/messages`)
          assert.strictEqual(transcript.status, 404, `${what}: the refused turn created no chat`)
        }
        // A well-formed pair (an emoji) is fine and comes back exactly.
        const ok = yield* postJson("/api/agent/chat", { chatId: "surrogate-pair", messages: [user("u1", "smile \ud83d\ude00")] })
        assert.strictEqual(ok.status, 200, ok.text)
        const stored = yield* request("/api/chats/surrogate-pair/messages")
        assert.strictEqual(stored.json.messages[0].content, "smile \ud83d\ude00")
      }))

    it.effect("every documented chat id (1–128 characters) round-trips; 129 is a 400, not a 404", () =>
      Effect.gen(function*() {
        for (const length of [1, 100, 101, 127, 128]) {
          const chatId = "c".repeat(length - 1) + "9"
          const turn = yield* postJson("/api/agent/chat", { chatId, messages: [user("u1", `length ${length}`)] })
          assert.strictEqual(turn.status, 200, `${length}: ${turn.text}`)
          const transcript = yield* request(`/api/chats/${chatId}/messages`)
          assert.strictEqual(transcript.status, 200, `${length}: ${transcript.text}`)
          assert.strictEqual(transcript.json.messages[0].content, `length ${length}`)
        }
        const tooLong = "x".repeat(129)
        const body = yield* postJson("/api/agent/chat", { chatId: tooLong, messages: [user("u1", "x")] })
        assert.strictEqual(body.status, 400)
        assert.include(body.json.error, "chatId")
        const path = yield* request(`/api/chats/${tooLong}/messages`)
        assert.strictEqual(path.status, 400, path.text)
        assert.strictEqual(path.json.code, "invalid_request")
        assert.include(path.json.error, "chatId")
      }))

    it.effect("an empty body is a JSON 4xx, never the framework's plain-text 415", () =>
      Effect.gen(function*() {
        const noBody = yield* request("/api/media/transcriptions", { method: "POST" })
        assert.strictEqual(noBody.status, 400, noBody.text)
        assert.strictEqual(noBody.json.code, "invalid_request")
        assert.include(noBody.json.error, "multipart/form-data")

        const emptyMultipart = yield* request("/api/media/transcriptions", {
          method: "POST",
          headers: { "content-type": "multipart/form-data; boundary=x" }
        })
        assert.isTrue(emptyMultipart.status === 400, emptyMultipart.text)
        assert.strictEqual(emptyMultipart.json.code, "invalid_request")

        const textPlain = yield* request("/api/agent/chat", { method: "POST", headers: { "content-type": "text/plain" } })
        assert.strictEqual(textPlain.status, 415, textPlain.text)
        assert.strictEqual(textPlain.json.code, "unsupported_media_type")
        assert.include(textPlain.json.error, "application/json")

        const jsonEmpty = yield* request("/api/agent/chat", { method: "POST", headers: { "content-type": "application/json" } })
        assert.strictEqual(jsonEmpty.status, 400, jsonEmpty.text)
        assert.strictEqual(jsonEmpty.json.code, "invalid_request")

        for (const res of [noBody, emptyMultipart, textPlain, jsonEmpty]) assert.include(res.contentType, "application/json")
      }))

    it.effect("a file part with filename=\"\" and more than 64 KiB is answered at once with a 400", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const boundary = "edge-boundary-1"
        const body = multipart(boundary, [
          { headers: "Content-Disposition: form-data; name=\"file\"; filename=\"\"\r\nContent-Type: video/mp4", data: "a".repeat(200 * 1024) }
        ])
        const res = yield* rawRequest(base, rawMultipart(boundary, body))
        assert.strictEqual(res.status, 400, res.head)
        assert.strictEqual(res.json.code, "invalid_request")
        assert.include(res.json.error, "file")

        // The same upload with a name is accepted: the empty name is what was wrong.
        const named = multipart(boundary, [
          { headers: "Content-Disposition: form-data; name=\"file\"; filename=\"clip.mp4\"\r\nContent-Type: video/mp4", data: "a".repeat(200 * 1024) }
        ])
        const ok = yield* rawRequest(base, rawMultipart(boundary, named))
        assert.strictEqual(ok.status, 200, ok.body)
        assert.strictEqual(ok.json.text, `transcript of clip.mp4 (${200 * 1024} bytes)`)
      }))

    it.effect("a body of thousands of parts is refused with 400 too_many_parts (the route takes two)", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const boundary = "edge-boundary-2"
        const valid = [
          { headers: "Content-Disposition: form-data; name=\"file\"; filename=\"clip.mp4\"\r\nContent-Type: video/mp4", data: "abc" },
          { headers: "Content-Disposition: form-data; name=\"language\"", data: "en" }
        ]
        const extra = Array.from({ length: 20_000 }, (_, i) => ({
          headers: `Content-Disposition: form-data; name="f${i}"; filename="p${i}"`,
          data: "x"
        }))
        const res = yield* rawRequest(base, rawMultipart(boundary, multipart(boundary, [...valid, ...extra])))
        assert.strictEqual(res.status, 400, res.head)
        assert.strictEqual(res.json.code, "too_many_parts")
        assert.strictEqual(res.json.limit, 2)
        assert.include(res.json.error, "at most 2")

        // Junk from the first part on: refused at the first part that is not file or language.
        const junk = yield* rawRequest(base, rawMultipart(boundary, multipart(boundary, extra)))
        assert.strictEqual(junk.status, 400, junk.head)
        assert.strictEqual(junk.json.code, "invalid_request")
        assert.include(junk.json.error, "f0")
      }))

    it.effect("requests Node's HTTP parser refuses get the contract's JSON error", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const garbage = yield* rawRequest(base, "\x16\x03\x01 this is not HTTP\r\n\r\n")
        assert.strictEqual(garbage.status, 400, garbage.head)
        assert.strictEqual(garbage.json.code, "invalid_request")
        assert.match(garbage.head, /content-type: application\/json/i)

        const both = yield* rawRequest(base, [
          "POST /api/agent/chat HTTP/1.1", "Host: x", "Content-Type: application/json",
          "Content-Length: 2", "Transfer-Encoding: chunked", "", "2\r\n{}\r\n0\r\n\r\n"
        ].join("\r\n"))
        assert.strictEqual(both.status, 400, both.head)
        assert.strictEqual(both.json.code, "invalid_request")

        const bigHeaders = yield* rawRequest(base, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"h".repeat(20 * 1024)}\r\n\r\n`)
        assert.strictEqual(bigHeaders.status, 431, bigHeaders.head)
        assert.strictEqual(bigHeaders.json.code, "headers_too_large")

        const expect = yield* rawRequest(base, rawPost("/api/agent/chat", "{}", { Expect: "bogus", Connection: "close" }))
        assert.strictEqual(expect.status, 417, expect.head)
        assert.strictEqual(expect.json.code, "expectation_failed")

        for (const answer of [garbage, both, bigHeaders, expect]) {
          assert.isString(answer.json.error)
          assert.match(answer.head, /content-type: application\/json/i)
        }
        // The server is unharmed.
        assert.strictEqual((yield* request("/healthz")).status, 200)
      }))

    it.effect("OPTIONS answers 204 with Allow; HEAD is GET without a body, or 405 with Allow", () =>
      Effect.gen(function*() {
        const options = yield* request("/api/agent/chat", { method: "OPTIONS" })
        assert.strictEqual(options.status, 204)
        assert.strictEqual(options.headers.get("allow"), "POST, OPTIONS")
        const optionsGet = yield* request("/api/chats/c1/messages", { method: "OPTIONS" })
        assert.strictEqual(optionsGet.headers.get("allow"), "GET, HEAD, OPTIONS")

        const head = yield* request("/api/agent/chat", { method: "HEAD" })
        assert.strictEqual(head.status, 405)
        assert.strictEqual(head.headers.get("allow"), "POST, OPTIONS")
        assert.strictEqual(head.text, "")
        const get = yield* request("/api/agent/chat")
        assert.strictEqual(get.status, 405)
        assert.strictEqual(get.headers.get("allow"), "POST, OPTIONS")

        const headHealth = yield* request("/healthz", { method: "HEAD" })
        assert.strictEqual(headHealth.status, 200)
        assert.strictEqual(headHealth.text, "")
        assert.strictEqual((yield* request("/nothing", { method: "OPTIONS" })).status, 404)
      }))

    it.effect("CORS_ORIGINS: preflight answered, listed origins echoed (errors included), others get nothing", () =>
      Effect.gen(function*() {
        const preflight = yield* request("/api/agent/chat", {
          method: "OPTIONS",
          headers: {
            origin: "https://app.example",
            "access-control-request-method": "POST",
            "access-control-request-headers": "authorization, content-type"
          }
        })
        assert.strictEqual(preflight.status, 204)
        assert.strictEqual(preflight.headers.get("access-control-allow-origin"), "https://app.example")
        assert.strictEqual(preflight.headers.get("access-control-allow-credentials"), "true")
        assert.include(preflight.headers.get("access-control-allow-methods") ?? "", "POST")
        assert.include(preflight.headers.get("access-control-allow-headers") ?? "", "authorization")
        assert.include(preflight.headers.get("access-control-allow-headers") ?? "", "content-type")
        assert.include(preflight.headers.get("vary") ?? "", "Origin")

        const actual = yield* postJson("/api/agent/chat", { messages: [user("u1", "hi")] }, { origin: "https://admin.example" })
        assert.strictEqual(actual.status, 200)
        assert.strictEqual(actual.headers.get("access-control-allow-origin"), "https://admin.example")
        assert.include(actual.headers.get("vary") ?? "", "Origin")
        const error = yield* postJson("/api/agent/chat", {}, { origin: "https://app.example" })
        assert.strictEqual(error.status, 400)
        assert.strictEqual(error.headers.get("access-control-allow-origin"), "https://app.example")

        const stranger = yield* request("/api/agent/chat", {
          method: "OPTIONS",
          headers: { origin: "https://evil.example", "access-control-request-method": "POST" }
        })
        assert.strictEqual(stranger.status, 204)
        assert.isNull(stranger.headers.get("access-control-allow-origin"))
        const strangerGet = yield* request("/healthz", { headers: { origin: "https://evil.example" } })
        assert.isNull(strangerGet.headers.get("access-control-allow-origin"))
        assert.isNull(strangerGet.headers.get("access-control-allow-credentials"))
      }))

    it.effect("more messages than CHAT_MAX_MESSAGES (default 1,000) is a 400 naming the limit; nothing stored", () =>
      Effect.gen(function*() {
        const messages = Array.from({ length: 1_001 }, (_, i) => user(`m${i}`, "x"))
        const before = fake.calls.length
        const res = yield* postJson("/api/agent/chat", { chatId: "too-many", messages })
        assert.strictEqual(res.status, 400, res.text)
        assert.strictEqual(res.json.code, "too_many_messages")
        assert.strictEqual(res.json.limit, 1_000)
        assert.include(res.json.error, "1000")
        assert.include(res.json.error, "CHAT_MAX_MESSAGES")
        assert.strictEqual(fake.calls.length, before, "the provider is not called")
        assert.strictEqual((yield* request("/api/chats/too-many/messages")).status, 404)
      }))

    it.effect("/healthz answers while a max-size turn is being persisted", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        fake.answerWith(() => Effect.succeed({ content: "stored them all" }))
        const chatId = "max-size-turn"
        // 1,000 messages of ~9 KiB: just under the 10 MiB body limit.
        const messages = Array.from({ length: 1_000 }, (_, i) => user(`big-${i}`, `${i} ${"y".repeat(9_000)}`))
        const turn = yield* Effect.forkChild(postJson("/api/agent/chat", { chatId, messages }))
        const stored = () =>
          sql<{ n: number }>`SELECT count(*)::int AS n FROM chat_messages WHERE chat_id = ${chatId}`.pipe(
            Effect.map((rows) => rows[0]!.n)
          )
        // Between two looks at a partly stored turn, a health probe was sent and answered.
        let answeredMidway = false
        while (!answeredMidway && turn.pollUnsafe() === undefined) {
          const before = yield* stored()
          const health = yield* request("/healthz")
          assert.strictEqual(health.status, 200)
          const after = yield* stored()
          if (before > 0 && after < messages.length) answeredMidway = true
        }
        const answer = yield* Fiber.join(turn)
        assert.strictEqual(answer.status, 200, answer.text)
        assert.isTrue(answeredMidway, "a /healthz was answered while the turn's messages were being stored")
        assert.strictEqual(yield* stored(), messages.length + 1, "the user's messages and the answer")
        const transcript = yield* request(`/api/chats/${chatId}/messages`)
        assert.deepStrictEqual(
          transcript.json.messages.map((m: ChatMessage) => m.id),
          [...messages.map((m) => m.id), answer.json.messageId],
          "batches keep the order"
        )
      }))
  })

  layer(layerTestServer(makeFakeProvider().layer, { CORS_ORIGINS: "*", CHAT_MAX_MESSAGES: "3" }), { excludeTestServices: true })(
    "configured",
    (it) => {
      it.effect("CORS_ORIGINS=*: any origin, and credentials are never allowed with the wildcard", () =>
        Effect.gen(function*() {
          const preflight = yield* request("/api/chats/c1/messages", {
            method: "OPTIONS",
            headers: { origin: "https://anyone.example", "access-control-request-method": "GET" }
          })
          assert.strictEqual(preflight.status, 204)
          assert.strictEqual(preflight.headers.get("access-control-allow-origin"), "*")
          assert.isNull(preflight.headers.get("access-control-allow-credentials"))
          const get = yield* request("/healthz", { headers: { origin: "https://anyone.example" } })
          assert.strictEqual(get.headers.get("access-control-allow-origin"), "*")
          assert.isNull(get.headers.get("access-control-allow-credentials"))
        }))

      it.effect("CHAT_MAX_MESSAGES sets the limit", () =>
        Effect.gen(function*() {
          const four = yield* postJson("/api/agent/chat", { messages: [1, 2, 3, 4].map((i) => user(`m${i}`, "x")) })
          assert.strictEqual(four.status, 400)
          assert.strictEqual(four.json.limit, 3)
          const three = yield* postJson("/api/agent/chat", { messages: [1, 2, 3].map((i) => user(`m${i}`, "x")) })
          assert.strictEqual(three.status, 200)
        }))
    }
  )
})
