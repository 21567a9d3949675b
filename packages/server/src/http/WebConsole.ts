/**
 * The web console (`packages/web`, built into `dist/web` by `npm run build`),
 * served beside the API (docs/console.md):
 *
 * - `/` and the console's own paths (`/chats`, `/chats/…`, `/operator`,
 *   `/operator/…`) answer `index.html` — the client-side router takes it from
 *   there — revalidated on every load (`no-cache`), under the console's strict
 *   Content-Security-Policy: its own scripts, styles and API only, no inline
 *   script, no framing by another site.
 * - `/assets/<name>`: Vite's hashed files, cached for a year (`immutable`: a
 *   new build has new names), compressed once per process (brotli or gzip, as
 *   the docs page is). A name that is not a plain file name (`..`, `/`, an
 *   encoded one) or no file of the build is a 404: nothing outside
 *   `dist/web/assets` is ever read.
 * - `/sandbox.html`: the frame a demo sub-agent's page runs in, under its own
 *   policy — inline scripts and styles allowed, no network at all, sandboxed —
 *   so the console keeps its strict one (see docs/console.md for why not
 *   `srcdoc`).
 *
 * Without a build (`dist/web/index.html` missing), `/` redirects to the API's
 * documentation as it did before the console existed, and the rest is a 404.
 * Files are read per request (a rebuild under a running server is served at
 * once); `WEB_DIR` names another build directory.
 */
import { Config, Effect, Layer, Option } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { readFile } from "node:fs/promises"
import { extname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { chooseCoding, compress } from "./ApiDocs.ts"
import type { CompressedBody } from "./ApiDocs.ts"

/** The console's documents: its own origin for everything, no inline script or style, never framed by another site. */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "frame-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'"
].join("; ")

/** The demo frame: the demo's own inline scripts and styles, no network, no form, sandboxed (an opaque origin). */
export const SANDBOX_CSP = [
  "default-src 'none'",
  "script-src 'unsafe-inline'",
  "style-src 'unsafe-inline'",
  "img-src data: blob:",
  "font-src data:",
  "media-src data: blob:",
  "connect-src 'none'",
  "form-action 'none'",
  "base-uri 'none'",
  "sandbox allow-scripts"
].join("; ")

/** Hashed names: a file under a name never changes. */
export const ASSET_CACHE_CONTROL = "public, max-age=31536000, immutable"

/** The console's paths served with `index.html` (the client-side router's), beside `/assets/*` and `/sandbox.html`. */
export const CONSOLE_ROUTES = [
  { method: "GET", path: "/" },
  // The router's `/x/*` matches `/x` as well.
  { method: "GET", path: "/chats/*" },
  { method: "GET", path: "/operator/*" },
  { method: "GET", path: "/sandbox.html" },
  { method: "GET", path: "/assets/*" }
] as const

/** `dist/web` from this module, run from its sources (`packages/server/src/http`) or its build (`dist/server/src/http`). */
export const DEFAULT_WEB_DIR = fileURLToPath(new URL(import.meta.url.endsWith(".ts") ? "../../../../dist/web" : "../../../web", import.meta.url))

const COMMON_HEADERS = { "x-content-type-options": "nosniff", "referrer-policy": "no-referrer" }

const CONTENT_TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".webp": "image/webp",
  ".woff2": "font/woff2",
  ".json": "application/json",
  ".map": "application/json",
  ".txt": "text/plain; charset=utf-8"
}

/** A plain file name: no separator, no `..`, nothing encoded. */
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/

const notFound = HttpServerResponse.empty({ status: 404 })

/** A file's bytes, or `undefined` when it cannot be read (missing, a directory). */
const read = (path: string) => Effect.promise(() => readFile(path).then((bytes) => bytes as Uint8Array | undefined, () => undefined))

const document = (path: string, csp: string) =>
  Effect.map(read(path), (bytes) =>
    bytes === undefined ? undefined : HttpServerResponse.uint8Array(bytes, {
      contentType: "text/html; charset=utf-8",
      headers: { ...COMMON_HEADERS, "cache-control": "no-cache", "content-security-policy": csp }
    }))

/** The console's routes over the build in `dir`. */
export const routes = (dir: string) =>
  HttpRouter.use(Effect.fnUntraced(function*(router) {
    // Compressed once per name per process: the names are hashes of the contents.
    const compressed = new Map<string, CompressedBody & { readonly identity: Uint8Array }>()

    const index = Effect.map(
      document(join(dir, "index.html"), CONSOLE_CSP),
      (response) => response ?? notFound
    )

    const asset = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const name = request.url.split(/[?#]/)[0]!.slice("/assets/".length)
      const contentType = CONTENT_TYPES[extname(name)]
      if (!ASSET_NAME.test(name) || contentType === undefined) return notFound
      let body = compressed.get(name)
      if (body === undefined) {
        const bytes = yield* read(join(dir, "assets", name))
        if (bytes === undefined) return notFound
        body = { ...compress(bytes, contentType), identity: bytes }
        compressed.set(name, body)
      }
      const coding = chooseCoding(request.headers["accept-encoding"])
      const headers: Record<string, string> = { ...COMMON_HEADERS, "cache-control": ASSET_CACHE_CONTROL, vary: "Accept-Encoding" }
      if (coding !== "identity") headers["content-encoding"] = coding
      return HttpServerResponse.uint8Array(coding === "identity" ? body.identity : body[coding], { contentType, headers })
    })

    // Without a build, `/` is the API's documentation, as before the console.
    yield* router.add("GET", "/", Effect.map(document(join(dir, "index.html"), CONSOLE_CSP), (response) =>
      response ?? HttpServerResponse.redirect("/docs", { status: 302 })))
    for (const path of ["/chats/*", "/operator/*"] as const) yield* router.add("GET", path, index)
    yield* router.add("GET", "/sandbox.html", Effect.map(document(join(dir, "sandbox.html"), SANDBOX_CSP), (response) => response ?? notFound))
    yield* router.add("GET", "/assets/*", asset)
  }))

/** The console over `WEB_DIR`, by default the build's `dist/web`. */
export const layer = Layer.unwrap(Effect.gen(function*() {
  const configured = yield* Config.option(Config.String("WEB_DIR")).pipe(Effect.orElseSucceed(() => Option.none()))
  const dir = Option.getOrElse(Option.filter(Option.map(configured, (s) => s.trim()), (s) => s !== ""), () => DEFAULT_WEB_DIR)
  return routes(dir)
}))
