/**
 * The web console as the server serves it (docs/console.md), over a build of
 * its own in a scratch `WEB_DIR`: `index.html` for `/` and the console's
 * paths under the strict policy, the hashed assets cached for a year and
 * compressed, the demo frame under its own policy, and nothing else — no path
 * out of the build, no change to the API's answers. The real build in the
 * browser: packages/web/test/Console.test.ts.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import { afterAll } from "vitest"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { baseUrl, layerTestServer, request } from "../support/TestServer.ts"
import { ASSET_CACHE_CONTROL, CONSOLE_CSP, DEFAULT_WEB_DIR, SANDBOX_CSP } from "../../src/http/WebConsole.ts"

const dir = mkdtempSync(join(tmpdir(), "switchboard-web-"))
const INDEX = `<!doctype html><title>console</title><script type="module" src="/assets/index-AbC_12-x.js"></script>`
const SCRIPT = `console.log(${JSON.stringify("x".repeat(4000))})\n`
mkdirSync(join(dir, "assets"))
writeFileSync(join(dir, "index.html"), INDEX)
writeFileSync(join(dir, "sandbox.html"), "<!doctype html><title>sandbox</title>")
writeFileSync(join(dir, "assets", "index-AbC_12-x.js"), SCRIPT)
writeFileSync(join(dir, "secret.txt"), "outside the assets")
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** One request with its path sent exactly as written (`fetch` and `new URL` would resolve `..`). */
const raw = (base: string, path: string, headers: Record<string, string> = {}) =>
  Effect.promise(() =>
    new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
      const { hostname, port } = new URL(base)
      const req = httpRequest({ hostname, port, path, headers }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
      })
      req.on("error", reject)
      req.end()
    })
  )

describe("web console", () => {
  layer(layerTestServer(makeFakeProvider().layer, { WEB_DIR: dir }), { excludeTestServices: true })("served", (it) => {
    it.effect("index.html for / and the console's paths: no-cache, the strict policy, nosniff, no referrer", () =>
      Effect.gen(function*() {
        for (const path of ["/", "/chats", "/chats/c1", "/operator", "/operator/tasks/t1", "/chats/c1?x=1"]) {
          const answer = yield* request(path)
          assert.strictEqual(answer.status, 200, path)
          assert.strictEqual(answer.text, INDEX, path)
          assert.strictEqual(answer.contentType, "text/html; charset=utf-8", path)
          assert.strictEqual(answer.headers.get("cache-control"), "no-cache", path)
          assert.strictEqual(answer.headers.get("content-security-policy"), CONSOLE_CSP, path)
          assert.strictEqual(answer.headers.get("x-content-type-options"), "nosniff", path)
          assert.strictEqual(answer.headers.get("referrer-policy"), "no-referrer", path)
        }
        assert.include(CONSOLE_CSP, "script-src 'self'")
        assert.include(CONSOLE_CSP, "frame-ancestors 'none'")
      }))

    it.effect("a hashed asset: cached a year, immutable; gzip or brotli when accepted, the same bytes", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const plain = yield* raw(base, "/assets/index-AbC_12-x.js")
        assert.strictEqual(plain.status, 200)
        assert.strictEqual(plain.body.toString("utf8"), SCRIPT)
        assert.strictEqual(plain.headers["content-type"], "text/javascript; charset=utf-8")
        assert.strictEqual(plain.headers["cache-control"], ASSET_CACHE_CONTROL)
        assert.strictEqual(plain.headers["x-content-type-options"], "nosniff")
        const gzipped = yield* raw(base, "/assets/index-AbC_12-x.js", { "accept-encoding": "gzip" })
        assert.strictEqual(gzipped.headers["content-encoding"], "gzip")
        assert.strictEqual(gunzipSync(gzipped.body).toString("utf8"), SCRIPT)
        assert.isBelow(gzipped.body.length, SCRIPT.length / 10)
        const brotli = yield* raw(base, "/assets/index-AbC_12-x.js", { "accept-encoding": "gzip, br" })
        assert.strictEqual(brotli.headers["content-encoding"], "br")
      }))

    it.effect("/sandbox.html under its own policy: inline scripts, no network, sandboxed", () =>
      Effect.gen(function*() {
        const answer = yield* request("/sandbox.html")
        assert.strictEqual(answer.status, 200)
        assert.strictEqual(answer.headers.get("content-security-policy"), SANDBOX_CSP)
        assert.strictEqual(answer.headers.get("cache-control"), "no-cache")
        assert.include(SANDBOX_CSP, "connect-src 'none'")
        assert.include(SANDBOX_CSP, "sandbox allow-scripts")
      }))

    it.effect("a path out of the build or an unknown asset is a JSON 404, never a file", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const paths = [
          "/assets/../secret.txt",
          "/assets/..%2fsecret.txt",
          "/assets/%2e%2e%2fsecret.txt",
          "/assets/..%5csecret.txt",
          "/assets/../../package.json",
          "/assets/%2e%2e/%2e%2e/package.json",
          "/assets/missing-123.js",
          "/assets/",
          "/assets/.hidden.js",
          "/assets/index-AbC_12-x.js/x",
          "/assets/sub/index-AbC_12-x.js",
          "/assets/index-AbC_12-x.js%00.js",
          "/index.html",
          "/secret.txt",
          "/chatsx",
          "/operatorx/hosts"
        ]
        for (const path of paths) {
          const answer = yield* raw(base, path)
          assert.strictEqual(answer.status, 404, path)
          assert.notInclude(answer.body.toString("utf8"), "outside the assets", path)
          assert.strictEqual(JSON.parse(answer.body.toString("utf8")).code, "not_found", path)
        }
      }))

    it.effect("the API and its documentation answer as before", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* request("/healthz")).status, 200)
        const docs = yield* request("/docs")
        assert.strictEqual(docs.status, 200)
        assert.isNull(docs.headers.get("content-security-policy"))
        const unknown = yield* request("/api/nope")
        assert.strictEqual(unknown.status, 404)
        assert.strictEqual(unknown.json.code, "not_found")
        const post = yield* request("/", { method: "POST" })
        assert.strictEqual(post.status, 405)
        assert.strictEqual(post.headers.get("allow"), "GET, HEAD, OPTIONS")
        const head = yield* request("/chats/c1", { method: "HEAD" })
        assert.strictEqual(head.status, 200)
      }))

    it.effect("by default, the build's dist/web (from the sources as from dist/server)", () =>
      Effect.sync(() => {
        assert.strictEqual(DEFAULT_WEB_DIR, join(import.meta.dirname, "..", "..", "..", "..", "dist", "web"))
      }))
  })
})
