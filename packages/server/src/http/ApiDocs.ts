/**
 * `GET /openapi.json` and `GET /docs` (the Scalar page over it), served
 * compressed and cacheable. The page inlines Scalar's whole bundle (3.2 MB),
 * so each body is prepared once per process — gzip and brotli (and, for the
 * small document, identity), with an ETag — and a request only picks a
 * variant: `Accept-Encoding` chooses the coding, `If-None-Match` answers 304.
 *
 * The page is rendered and compressed by a short-lived child process
 * (`DocsPageRenderer.ts`) that exits when done: Scalar's bundle is a module,
 * and a module, once imported, stays resident for the life of the process
 * that imported it (its source and its exported string, ~13 MB); rendering
 * it in the server, or in a worker thread of the server, also raised the
 * server's peak RSS by ~130 MB at start-up (measured: 171 → 300 MB on
 * PostgreSQL). The server keeps only the compressed bytes; the rare client
 * that accepts neither coding gets the page inflated per request.
 */
import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiScalar, OpenApi } from "effect/http-api"
import type { HttpApi, HttpApiGroup } from "effect/http-api"
import { createHash } from "node:crypto"
import { fork } from "node:child_process"
import { promisify } from "node:util"
import { brotliCompressSync, constants, gunzip, gzipSync } from "node:zlib"
import { siblingModule } from "../process/SiblingModule.ts"

/** Five minutes fresh, then revalidated by ETag (a deploy changes the document). */
export const DOCS_CACHE_CONTROL = "public, max-age=300"

type Coding = "br" | "gzip" | "identity"

interface Variant {
  readonly body: Effect.Effect<Uint8Array>
  readonly etag: string
}

export interface Prepared {
  readonly contentType: string
  readonly variants: Record<Coding, Variant>
}

/** What crosses from the renderer process: the compressed bodies, the hash of the identity one. */
export interface CompressedBody {
  readonly contentType: string
  readonly hash: string
  readonly gzip: Uint8Array
  readonly br: Uint8Array
}

export const compress = (content: string | Uint8Array, contentType: string): CompressedBody => {
  const identity = typeof content === "string" ? Buffer.from(content, "utf8") : Buffer.from(content)
  // Brotli quality 6: 4% larger than 11 and fifty times faster (120 ms, not 6 s, for the docs page).
  const br = brotliCompressSync(identity, {
    params: { [constants.BROTLI_PARAM_QUALITY]: 6, [constants.BROTLI_PARAM_SIZE_HINT]: identity.length }
  })
  return {
    contentType,
    hash: createHash("sha256").update(identity).digest("base64url").slice(0, 27),
    gzip: gzipSync(identity, { level: 6 }),
    br
  }
}

const inflate = promisify(gunzip)

/**
 * The variants of a compressed body; identity kept as well when `keepIdentity`, else inflated per
 * request — on libuv's thread pool, not the event loop (the docs page is 6 MB inflated).
 */
const variantsOf = (body: CompressedBody, keepIdentity: Uint8Array | undefined): Prepared => ({
  contentType: body.contentType,
  variants: {
    identity: {
      body: keepIdentity === undefined ? Effect.promise(() => inflate(body.gzip)) : Effect.succeed(keepIdentity),
      etag: `"${body.hash}"`
    },
    gzip: { body: Effect.succeed(body.gzip), etag: `"${body.hash}-gzip"` },
    br: { body: Effect.succeed(body.br), etag: `"${body.hash}-br"` }
  }
})

const prepare = (text: string, contentType: string): Prepared =>
  variantsOf(compress(text, contentType), Buffer.from(text, "utf8"))

/** The preferred coding the client accepts (q > 0): brotli, then gzip, else identity. */
export const chooseCoding = (acceptEncoding: string | undefined): Coding => {
  const accepted = new Map<string, number>()
  for (const item of (acceptEncoding ?? "").split(",")) {
    const [name, ...params] = item.trim().toLowerCase().split(";")
    if (!name) continue
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="))
    accepted.set(name, q === undefined ? 1 : Number(q.slice(2)) || 0)
  }
  const ok = (coding: string) => (accepted.get(coding) ?? accepted.get("*") ?? 0) > 0
  return ok("br") ? "br" : ok("gzip") ? "gzip" : "identity"
}

const matches = (ifNoneMatch: string | undefined, prepared: Prepared) => {
  if (ifNoneMatch === undefined) return false
  if (ifNoneMatch.trim() === "*") return true
  const tags = new Set(ifNoneMatch.split(",").map((tag) => tag.trim().replace(/^W\//, "")))
  // Any coding of the same document validates: the content behind them is the same.
  return Object.values(prepared.variants).some((variant) => tags.has(variant.etag))
}

const serve = (prepared: Effect.Effect<Prepared>) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const document = yield* prepared
    const coding = chooseCoding(request.headers["accept-encoding"])
    const variant = document.variants[coding]
    const headers: Record<string, string> = { etag: variant.etag, "cache-control": DOCS_CACHE_CONTROL, vary: "Accept-Encoding" }
    if (matches(request.headers["if-none-match"], document)) return HttpServerResponse.empty({ status: 304, headers })
    if (coding !== "identity") headers["content-encoding"] = coding
    return HttpServerResponse.uint8Array(yield* variant.body, { contentType: document.contentType, headers })
  })

/** The HTML Effect's Scalar route renders, taken from it once so the page stays exactly Effect's. */
export const scalarHtml = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) =>
  Effect.promise(async () => {
    const { dispose, handler } = HttpRouter.toWebHandler(HttpApiScalar.layer(api, { path: "/docs" }), { disableLogger: true })
    try {
      return await (await handler(new Request("http://docs.invalid/docs"))).text()
    } finally {
      await dispose()
    }
  })

/** The docs page of `@switchboard/domain`'s `Api`, rendered and compressed by a child process. */
const docsPageFromChild = Effect.callback<CompressedBody, Error>((resume) => {
  const child = fork(siblingModule(import.meta.url, "DocsPageRenderer"), [], {
    serialization: "advanced", // the compressed bodies cross as bytes
    stdio: ["ignore", "ignore", "inherit", "ipc"]
  })
  child.once("message", (body) => resume(Effect.succeed(body as CompressedBody)))
  child.once("error", (error) => resume(Effect.fail(error)))
  child.once("exit", (code, signal) => resume(Effect.fail(new Error(`the docs page process exited (${signal ?? code}) without a page`))))
  return Effect.sync(() => child.kill())
})

export const DOCS_ROUTES = [
  { method: "GET", path: "/openapi.json" },
  { method: "GET", path: "/docs" }
] as const

/**
 * The two documentation routes for `Api` (the domain's: the child process
 * renders that one). Should it fail, the page is rendered here instead, so
 * `/docs` still answers — at the cost of Scalar's bundle staying resident.
 */
export const layerApiDocs = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) =>
  HttpRouter.use(Effect.fnUntraced(function*(router) {
    const openapi = yield* Effect.cached(Effect.sync(() =>
      prepare(JSON.stringify(OpenApi.fromApi(api)), "application/json")
    ))
    const docs = yield* Effect.cached(
      docsPageFromChild.pipe(
        Effect.map((body) => variantsOf(body, undefined)),
        Effect.catch((error) =>
          Effect.logWarning("docs page: its process failed; rendering it in the server", error.message).pipe(
            Effect.andThen(scalarHtml(api)),
            Effect.map((html) => prepare(html, "text/html; charset=utf-8"))
          )
        )
      )
    )
    // Prepared once, in the background from start-up on, so listening does not wait for the compression.
    yield* Effect.forkDetach(Effect.andThen(openapi, docs))
    yield* router.add("GET", "/openapi.json", serve(openapi))
    yield* router.add("GET", "/docs", serve(docs))
  }))
