/**
 * The served OpenAPI document says everything the server does:
 * both validators accept it, each operation lists each error it can answer
 * (with the headers the HTTP layer sets), the schemas carry the server's
 * checks, free-form values allow any JSON, unknown keys are documented as
 * ignored and are, and the document and the docs page are served compressed
 * and cacheable.
 */
import SwaggerParser from "@apidevtools/swagger-parser"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Ajv2020 } from "ajv/dist/2020.js"
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { brotliDecompressSync, gunzipSync } from "node:zlib"
import { chooseCoding } from "../../src/http/ApiDocs.ts"
import { checkDocumented } from "../support/DocumentedResponses.ts"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { rawRequest } from "../support/RawHttp.ts"
import { baseUrl, layerTestServer, postJson, request } from "../support/TestServer.ts"

const REDOCLY = fileURLToPath(new URL("../../../../node_modules/@redocly/cli/bin/cli.js", import.meta.url))

const user = (id: string, content: string) => ({ id, role: "user", content, timestamp: 1_700_000_000_000 })

const served = Effect.map(request("/openapi.json"), (res) => res.json as Record<string, any>)

/** Operation → the status codes (and for a status, the error codes) it documents. */
const codesOf = (response: any, doc: any): Array<string> => {
  const schema = response?.content?.["application/json"]?.schema
  const refs: Array<any> = schema?.anyOf ?? [schema]
  return refs.map((s) => {
    const target = s?.$ref ? doc.components.schemas[s.$ref.split("/").at(-1)] : s
    return target?.properties?.code?.enum?.[0]
  }).filter((code): code is string => typeof code === "string")
}

describe("OpenAPI document", () => {
  it("the route tests' check refuses an undocumented status or body, and lets documented ones through", () => {
    checkDocumented("POST", "/api/agent/chat", 409, "application/json", { error: "busy", code: "turn_in_flight", chatId: "c" })
    checkDocumented("GET", "/api/chats/c1/messages?x=1", 404, "application/json", { error: "No route", code: "not_found" })
    checkDocumented("DELETE", "/api/agent/chat", 405, "application/json", { nothing: "documented operation" })
    checkDocumented("GET", "/nope", 418, "text/plain", undefined)
    assert.throws(() => checkDocumented("GET", "/healthz", 400, "application/json", { error: "x", code: "invalid_request" }), /do not document/)
    assert.throws(() => checkDocumented("GET", "/api/chats/c1/messages", 401, "application/json", { error: "x", code: "nope" }), /does not describe/)
    assert.throws(() => checkDocumented("POST", "/api/agent/chat", 200, "application/json", { content: 1, messageId: "m" }), /does not describe/)
  })

  layer(layerTestServer(makeFakeProvider().layer), { excludeTestServices: true })("served", (it) => {
    it.effect("@apidevtools/swagger-parser validates it", () =>
      Effect.gen(function*() {
        const doc = yield* served
        const api = yield* Effect.promise(() => SwaggerParser.validate(structuredClone(doc) as never))
        assert.strictEqual((api as { openapi: string }).openapi, "3.1.0")
      }))

    it.effect("@redocly/cli lint reports no errors", () =>
      Effect.gen(function*() {
        const doc = yield* served
        const dir = mkdtempSync(join(tmpdir(), "switchboard-openapi-"))
        try {
          const file = join(dir, "openapi.json")
          writeFileSync(file, JSON.stringify(doc))
          const run = spawnSync(process.execPath, [REDOCLY, "lint", "--format=json", file], {
            encoding: "utf8",
            timeout: 60_000,
            // No telemetry, no update check: tests reach nothing outside the machine.
            env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_UPDATE_NOTIFIER: "1" }
          })
          const report = JSON.parse(run.stdout) as { totals: { errors: number }; problems: Array<{ ruleId: string; severity: string; message: string }> }
          const errors = report.problems.filter((p) => p.severity === "error")
          assert.deepStrictEqual(errors, [], run.stderr)
          assert.strictEqual(report.totals.errors, 0)
          assert.strictEqual(run.status, 0, run.stderr)
        } finally {
          rmSync(dir, { recursive: true, force: true })
        }
      }))

    it.effect("each operation documents each error it can answer, with WWW-Authenticate, Allow and Retry-After", () =>
      Effect.gen(function*() {
        const doc = yield* served
        const op = (path: string, method: string) => doc.paths[path][method]
        const errors = (path: string, method: string) =>
          Object.fromEntries(Object.entries(op(path, method).responses as Record<string, unknown>)
            .filter(([status]) => status !== "200")
            .map(([status, response]) => [status, codesOf(response, doc)]))

        // 503 not_ready on every /api route: what it answers while the server is still starting.
        assert.deepStrictEqual(errors("/api/agent/chat", "post"), {
          "400": ["invalid_request", "too_many_messages"],
          "401": ["unauthenticated"],
          "404": ["agent_not_found"],
          "405": ["method_not_allowed"],
          "409": ["turn_in_flight", "agent_mismatch", "chat_full"],
          "413": ["payload_too_large"],
          "415": ["unsupported_media_type"],
          // budget_exceeded: the user's USER_DAILY_TOKENS used up.
          "429": ["rate_limited", "budget_exceeded"],
          "500": ["internal_error"],
          "502": ["provider_error", "provider_not_configured"],
          // overloaded: past MAX_CONCURRENT_TURNS, refused at once.
          "503": ["overloaded", "database_unavailable", "not_ready"]
        })
        assert.deepStrictEqual(errors("/api/chats/{chatId}/messages", "get"), {
          "400": ["invalid_request"],
          "401": ["unauthenticated"],
          "404": ["chat_not_found", "not_found"],
          "405": ["method_not_allowed"],
          "500": ["internal_error"],
          "503": ["database_unavailable", "not_ready"]
        })
        assert.deepStrictEqual(errors("/api/media/transcriptions", "post"), {
          "400": ["invalid_request", "too_many_parts"],
          "401": ["unauthenticated"],
          "405": ["method_not_allowed"],
          "413": ["payload_too_large"],
          "415": ["unsupported_media_type"],
          "500": ["internal_error"],
          "502": ["provider_error", "provider_not_configured"],
          "503": ["not_ready"]
        })
        // Nothing to decode on the probes: no 400.
        assert.deepStrictEqual(errors("/healthz", "get"), { "405": ["method_not_allowed"], "500": ["internal_error"] })
        assert.deepStrictEqual(errors("/readyz", "get"), {
          "405": ["method_not_allowed"],
          "500": ["internal_error"],
          "503": ["not_ready"]
        })
        for (const path of ["/api/agent/chat", "/api/chats/{chatId}/messages", "/api/media/transcriptions"]) {
          const method = path === "/api/chats/{chatId}/messages" ? "get" : "post"
          const responses = op(path, method).responses
          assert.property(responses["401"].headers, "WWW-Authenticate", path)
          assert.property(responses["405"].headers, "Allow", path)
          if (responses["503"]) assert.property(responses["503"].headers, "Retry-After", path)
          // The auth rule: bearer, or nothing when the server has no CHAT_TOKEN.
          assert.deepStrictEqual(op(path, method).security, [{ bearer: [] }, {}])
        }
        // A rate-limited turn or decision says when to come back in Retry-After (CHAT_RPM, PLANNER_HOST_RPM),
        // as does a turn of a user or a decision of a host out of its budget of tokens (budget_exceeded).
        for (const [path, method, codes] of [
          ["/api/agent/chat", "post", ["rate_limited", "budget_exceeded"]],
          ["/api/ui/chat", "post", ["rate_limited", "budget_exceeded"]],
          ["/internal/planner/decision", "post", ["rate_limited", "budget_exceeded"]]
        ] as const) {
          assert.deepStrictEqual(errors(path, method)["429"], [...codes], path)
          assert.property(op(path, method).responses["429"].headers, "Retry-After", path)
        }
        // A turn or a decision past the replica's limit (MAX_CONCURRENT_TURNS, PLANNER_MAX_CONCURRENT_DECISIONS).
        for (const [path, method] of [
          ["/api/agent/chat", "post"],
          ["/api/ui/chat", "post"],
          ["/internal/planner/decision", "post"]
        ] as const) {
          assert.include(errors(path, method)["503"] as ReadonlyArray<string>, "overloaded", path)
          assert.property(op(path, method).responses["503"].headers, "Retry-After", path)
        }
        // While the server starts, /readyz answers 503 not_ready with Retry-After too.
        assert.property(op("/readyz", "get").responses["503"].headers ?? {}, "Retry-After")
        assert.include(doc.components.securitySchemes.bearer.description, "CHAT_TOKEN")
        assert.deepStrictEqual(doc.servers, [{ url: "/", description: "The server serving this document" }])
        for (const tag of doc.tags) assert.isString(tag.description, tag.name)
        assert.deepStrictEqual(
          op("/readyz", "get").responses["200"].content["application/json"].schema.properties.migrations,
          { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER }
        )
      }))

    it.effect("the schemas refuse what the server refuses, and free-form values take any JSON", () =>
      Effect.gen(function*() {
        const doc = yield* served
        assert.notInclude(JSON.stringify(doc), `"additionalProperties":false`, "unknown keys are ignored, not refused")
        assert.deepStrictEqual(doc.components.schemas.JsonObject.additionalProperties, { $ref: "#/components/schemas/JsonValue" })

        const ajv = new Ajv2020({ strict: false })
        ajv.addSchema(doc, "openapi")
        const validBody = ajv.getSchema("openapi#/paths/~1api~1agent~1chat/post/requestBody/content/application~1json/schema")!
        const validPathId = ajv.compile({ ...doc.paths["/api/chats/{chatId}/messages"].get.parameters[0].schema })
        const transcriptionForm = doc.paths["/api/media/transcriptions"].post.requestBody.content["multipart/form-data"].schema
        const validLanguage = ajv.compile(transcriptionForm.properties.language)

        const good = {
          chatId: "c-1",
          messages: [{
            ...user("u1", "hi"),
            metadata: { anything: [1, { deep: null }], flag: true },
            toolCalls: [{ id: "t1", name: "transcribe_video", args: { clipId: "c1", at: [1, 2] } }],
            parts: [{ type: "data-clip", data: { any: "json" } }]
          }, { id: "r1", role: "tool", content: "done", timestamp: 2, toolResult: { toolCallId: "t1", name: "transcribe_video", result: { text: "…" } } }]
        }
        assert.isTrue(validBody(good), ajv.errorsText(validBody.errors))
        assert.strictEqual((yield* postJson("/api/agent/chat", good)).status, 200)

        const refused: Array<[string, unknown]> = [
          ["chatId pattern", { ...good, chatId: "a b" }],
          ["data-* pattern", { messages: [{ ...user("u1", "hi"), parts: [{ type: "clip", data: 1 }] }] }],
          ["a tool message carries toolResult", { messages: [{ id: "t", role: "tool", content: "x", timestamp: 1 }] }],
          ["NUL in a string", { messages: [user("u1", "a\u0000b")] }],
          ["NUL in free-form JSON", { messages: [{ ...user("u1", "hi"), metadata: { k: "a\u0000" } }] }],
          ["NUL in a free-form key", { messages: [{ ...user("u1", "hi"), metadata: { "a\u0000": 1 } }] }]
        ]
        for (const [rule, body] of refused) {
          assert.isFalse(validBody(body), `the document refuses: ${rule}`)
          const res = yield* postJson("/api/agent/chat", body)
          assert.strictEqual(res.status, 400, `the server refuses: ${rule}`)
          assert.strictEqual(res.json.code, "invalid_request")
        }
        assert.isFalse(validPathId("a/b c"))
        assert.isTrue(validPathId("c-1"))
        assert.strictEqual((yield* request("/api/chats/a%20b/messages")).status, 400)
        assert.isTrue(validLanguage("pt-BR"))
        assert.isFalse(validLanguage("english"))
        const form = new FormData()
        form.append("file", new Blob([new Uint8Array([1, 2])], { type: "video/mp4" }), "a.mp4")
        form.append("language", "english")
        const language = yield* request("/api/media/transcriptions", { method: "POST", body: form })
        assert.strictEqual(language.status, 400)
        assert.include(language.json.error, "language")
      }))

    it.effect("unknown keys are ignored: accepted, neither stored nor echoed", () =>
      Effect.gen(function*() {
        const res = yield* postJson("/api/agent/chat", {
          chatId: "unknown-keys",
          futureField: { v: 2 },
          messages: [{ ...user("u1", "hi"), futureField: "x" }]
        })
        assert.strictEqual(res.status, 200, res.text)
        const transcript = yield* request("/api/chats/unknown-keys/messages")
        assert.strictEqual(transcript.status, 200)
        assert.notInclude(transcript.text, "futureField")
        assert.deepStrictEqual(transcript.json.messages[0], user("u1", "hi"))
      }))

    it.effect("/openapi.json and /docs: compressed per Accept-Encoding, ETag + If-None-Match → 304, Cache-Control", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        for (const [path, type] of [["/openapi.json", "application/json"], ["/docs", "text/html"]] as const) {
          const plain = yield* rawRequest(base + path)
          assert.strictEqual(plain.status, 200)
          assert.include(String(plain.headers["content-type"]), type)
          assert.isUndefined(plain.headers["content-encoding"])
          assert.strictEqual(plain.headers["cache-control"], "public, max-age=300")
          assert.strictEqual(plain.headers["vary"], "Accept-Encoding")
          const etag = String(plain.headers.etag)
          assert.match(etag, /^"[A-Za-z0-9_-]+"$/)

          const br = yield* rawRequest(base + path, { headers: { "accept-encoding": "gzip, deflate, br" } })
          assert.strictEqual(br.headers["content-encoding"], "br")
          assert.isBelow(br.body.length, plain.body.length / 3)
          assert.isTrue(brotliDecompressSync(br.body).equals(plain.body))

          const gzip = yield* rawRequest(base + path, { headers: { "accept-encoding": "gzip;q=1, br;q=0" } })
          assert.strictEqual(gzip.headers["content-encoding"], "gzip")
          assert.isTrue(gunzipSync(gzip.body).equals(plain.body))
          assert.notStrictEqual(gzip.headers.etag, etag, "each coding is its own representation")

          for (const validator of [etag, String(br.headers.etag), `W/${etag}`]) {
            const again = yield* rawRequest(base + path, { headers: { "if-none-match": validator, "accept-encoding": "br" } })
            assert.strictEqual(again.status, 304, validator)
            assert.strictEqual(again.body.length, 0)
            assert.strictEqual(again.headers.etag, br.headers.etag)
          }
          const changed = yield* rawRequest(base + path, { headers: { "if-none-match": `"something-else"` } })
          assert.strictEqual(changed.status, 200)
        }
        const page = (yield* rawRequest(base + "/docs")).body.toString("utf8")
        assert.include(page, "Retry-After", "the page shows the finished document")
        const codings = ["", "identity", "gzip", "br;q=0, gzip", "*", "*;q=0", "gzip;q=0.5, br;q=0.1", "deflate", "BR"].map(chooseCoding)
        assert.deepStrictEqual(codings, ["identity", "identity", "gzip", "gzip", "br", "identity", "br", "identity", "br"])
      }))
  })

  layer(layerTestServer(makeFakeProvider().layer, { CHAT_TOKEN: "s3cret-token" }), { excludeTestServices: true })("with CHAT_TOKEN", (it) => {
    it.effect("every 401 carries WWW-Authenticate: Bearer", () =>
      Effect.gen(function*() {
        const answers = [
          yield* postJson("/api/agent/chat", { messages: [user("u1", "hi")] }),
          yield* postJson("/api/agent/chat", { messages: [user("u1", "hi")] }, { authorization: "Bearer wrong" }),
          yield* request("/api/chats/x/messages"),
          yield* request("/api/media/transcriptions", { method: "POST", body: new FormData() })
        ]
        for (const res of answers) {
          assert.strictEqual(res.status, 401)
          assert.strictEqual(res.json.code, "unauthenticated")
          assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer\b/)
        }
      }))
  })
})
