/**
 * Where the router finds no route, the JSON error layer's route table says
 * whether the path has other methods (405 with `Allow`, or 204 for
 * `OPTIONS`) or is unknown (404); where it finds one, the operation says what
 * it makes of the request's body (`RequestErrors.ts`).
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { rawRequest } from "../support/RawHttp.ts"
import { baseUrl, layerTestServer, request } from "../support/TestServer.ts"

describe("no route, and the body of a routed request", () => {
  layer(layerTestServer(makeFakeProvider().layer), { excludeTestServices: true })("over HTTP", (it) => {
    it.effect("a path with other methods is a 405 naming them, whatever the suffix; an unknown one a 404", () =>
      Effect.gen(function*() {
        for (const path of ["/healthz", "/healthz/", "/healthz?x=1", "/healthz;x"]) {
          const post = yield* request(path, { method: "POST" })
          assert.strictEqual(post.status, 405, path)
          assert.strictEqual(post.headers.get("allow"), "GET, HEAD, OPTIONS", path)
          assert.strictEqual(post.json.code, "method_not_allowed", path)
          assert.include(post.json.error, "on /healthz", path)
        }
        const docs = yield* request("/docs", { method: "OPTIONS" })
        assert.strictEqual(docs.status, 204)
        assert.strictEqual(docs.headers.get("allow"), "GET, HEAD, OPTIONS")
        const lease = yield* request("/internal/tasks/t1/lease", { method: "GET" })
        assert.strictEqual(lease.status, 405)
        assert.strictEqual(lease.headers.get("allow"), "POST, OPTIONS")
        const unknown = yield* request("/api/nothing", { method: "DELETE" })
        assert.strictEqual(unknown.status, 404)
        assert.strictEqual(unknown.json.code, "not_found")
        assert.strictEqual(unknown.json.error, "No route for DELETE /api/nothing")
      }))

    it.effect("a path parameter too long for the router: 404 for the method it has, 405 for another", () =>
      Effect.gen(function*() {
        const path = `/api/chats/${"x".repeat(2000)}/messages`
        const get = yield* request(path)
        assert.strictEqual(get.status, 404)
        assert.strictEqual(get.json.code, "not_found")
        const post = yield* request(path, { method: "POST" })
        assert.strictEqual(post.status, 405)
        assert.strictEqual(post.headers.get("allow"), "GET, HEAD, OPTIONS")
      }))

    it.effect("a body sent without a content type is refused (415), as one of another type is", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const body = new TextEncoder().encode(JSON.stringify({ messages: [] }))
        const untyped = yield* rawRequest(`${base}/api/agent/chat`, { method: "POST", body })
        assert.strictEqual(untyped.status, 415)
        const json = JSON.parse(untyped.body.toString("utf8"))
        assert.deepStrictEqual(json, { error: "Content-Type must be application/json", code: "unsupported_media_type" })
        const form = yield* rawRequest(`${base}/api/media/transcriptions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body
        })
        assert.strictEqual(form.status, 415)
        assert.deepStrictEqual(JSON.parse(form.body.toString("utf8")), {
          error: "Content-Type must be multipart/form-data, got application/json",
          code: "unsupported_media_type"
        })
      }))
  })
})
