/**
 * The web console (`packages/web`, built into `dist/web` by `npm run build`),
 * served beside the API (docs/console.md):
 *
 * - `/` and the console's own paths (`/chats`, `/chats/…`, `/operator`,
 *   `/operator/…`) answer `index.html` — the client-side router takes it from
 *   there — revalidated on every load (`no-cache`), under the console's strict
 *   Content-Security-Policy: its own scripts, styles and API only, no inline
 *   script, no framing by another site. Images: its own, and those of the
 *   origins `CONSOLE_IMAGE_ORIGINS` lists — which the console is told in a
 *   `<meta name="switchboard-image-origins">` added to `index.html`, so the
 *   markdown of an answer shows an image of any other origin as a link and the
 *   page never asks another origin for anything (docs/users.md, "No leak
 *   through the page").
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
import { Config, Effect, Layer } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { readFile } from "node:fs/promises"
import { extname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { invalidSetting } from "../process/InvalidSetting.ts"
import { optionalText, setting } from "../process/Setting.ts"
import { CONSOLE_IMAGE_ORIGINS_EXPECTED, consoleImageOrigins, ConsoleImageOriginsSetting } from "./ConsoleImageOrigins.ts"
import { chooseCoding, compress } from "./ApiDocs.ts"
import type { CompressedBody } from "./ApiDocs.ts"

/**
 * The console's documents: its own origin for everything, no inline script or style, never framed
 * by another site; images also from `imageOrigins` (`CONSOLE_IMAGE_ORIGINS`, already normalized:
 * nothing in an origin can break out of its directive).
 */
export const consoleCsp = (imageOrigins: ReadonlyArray<string> = []): string =>
  [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    ["img-src 'self' data: blob:", ...imageOrigins].join(" "),
    "connect-src 'self'",
    "frame-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'"
  ].join("; ")

/** The policy without `CONSOLE_IMAGE_ORIGINS`. */
export const CONSOLE_CSP = consoleCsp()

/** The `<meta>` the console reads its image origins from (packages/web/src/chat/ImagePolicy.ts). */
export const IMAGE_ORIGINS_META = "switchboard-image-origins"

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

const document = (path: string, csp: string, edit: (bytes: Uint8Array) => Uint8Array = (bytes) => bytes) =>
  Effect.map(read(path), (bytes) =>
    bytes === undefined ? undefined : HttpServerResponse.uint8Array(edit(bytes), {
      contentType: "text/html; charset=utf-8",
      headers: { ...COMMON_HEADERS, "cache-control": "no-cache", "content-security-policy": csp }
    }))

const escapeAttribute = (value: string) =>
  value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

/**
 * `index.html` with the image origins' `<meta>` in its head (before `</head>`, else first): none
 * when there are none, the build's bytes untouched.
 */
export const withImageOrigins = (imageOrigins: ReadonlyArray<string>) => {
  if (imageOrigins.length === 0) return (bytes: Uint8Array) => bytes
  const meta = `<meta name="${IMAGE_ORIGINS_META}" content="${escapeAttribute(imageOrigins.join(" "))}">`
  return (bytes: Uint8Array): Uint8Array => {
    const html = Buffer.from(bytes).toString("utf8")
    const head = html.search(/<\/head\s*>/i)
    const doctype = /^\s*<!doctype[^>]*>/i.exec(html)?.[0].length ?? 0
    const at = head >= 0 ? head : doctype
    return Buffer.from(`${html.slice(0, at)}${meta}${html.slice(at)}`, "utf8")
  }
}

/** The console's routes over the build in `dir`; markdown images also from `imageOrigins` (normalized origins). */
export const routes = (dir: string, imageOrigins: ReadonlyArray<string> = []) =>
  HttpRouter.use(Effect.fnUntraced(function*(router) {
    // Compressed once per name per process: the names are hashes of the contents.
    const compressed = new Map<string, CompressedBody & { readonly identity: Uint8Array }>()
    const csp = consoleCsp(imageOrigins)
    const indexDocument = document(join(dir, "index.html"), csp, withImageOrigins(imageOrigins))

    const index = Effect.map(indexDocument, (response) => response ?? notFound)

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
    yield* router.add("GET", "/", Effect.map(indexDocument, (response) =>
      response ?? HttpServerResponse.redirect("/docs", { status: 302 })))
    for (const path of ["/chats/*", "/operator/*"] as const) yield* router.add("GET", path, index)
    yield* router.add("GET", "/sandbox.html", Effect.map(document(join(dir, "sandbox.html"), SANDBOX_CSP), (response) => response ?? notFound))
    yield* router.add("GET", "/assets/*", asset)
  }))

/** The console's build (docs/console.md), by default `dist/web`; a directory without one serves no console. */
export const WebDirSetting = setting({ name: "WEB_DIR", blankIsUnset: true }, (name) =>
  optionalText(name).pipe(Config.map((dir) => dir ?? DEFAULT_WEB_DIR)))

/**
 * The console over `WEB_DIR`, with `CONSOLE_IMAGE_ORIGINS` (checked before the server starts,
 * `system/Settings.ts`: an invalid value here is a defect).
 */
export const layer = Layer.unwrap(Effect.gen(function*() {
  const dir = yield* WebDirSetting.config
  const value = yield* ConsoleImageOriginsSetting.config
  const imageOrigins = consoleImageOrigins(value)
  if (imageOrigins === undefined) {
    return yield* Effect.die(new Error(invalidSetting("CONSOLE_IMAGE_ORIGINS", value, CONSOLE_IMAGE_ORIGINS_EXPECTED)))
  }
  return routes(dir, imageOrigins)
}))
