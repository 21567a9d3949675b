/**
 * A local web for the research sub-agent's tests: one real HTTP server on
 * 127.0.0.1 that is both a SearXNG-compatible search API and the pages its
 * results point to.
 *
 * ```ts
 * const web = await FakeWeb.start()                       // or: yield* FakeWeb.scoped
 * // SEARCH_URL = web.origin
 * web.page("/sigma", FakeWeb.html("Sigma.js v3", "<p>…</p>"))
 * web.results([{ title: "Sigma.js v3", url: web.pageUrl("/sigma"), content: "…" }])
 * web.searches()                                          // the queries received, in order
 * ```
 *
 * Routes: `GET /search?q=…&format=json` → `{ query, results }` (the results
 * set with `results`, the same for every query, or a function of the query);
 * any other path → the page registered for it, else 404.
 */
import type { Effect, Scope } from "effect"
import { baseReply, scopedFake, startFakeHttp } from "@switchboard/providers/testing"
import type { FakeHttpServer, FakeReply, RecordedRequest } from "@switchboard/providers/testing"

export interface Hit {
  readonly title: string
  readonly url: string
  readonly content: string
}

export interface FakeWeb extends FakeHttpServer {
  /** `http://127.0.0.1:<port>`: the `SEARCH_URL`, and the origin of every page. */
  readonly origin: string
  pageUrl(path: string): string
  /** Serve `reply` at `path` (path and query, e.g. `/docs?v=3`). */
  page(path: string, reply: FakeReply): void
  results(hits: ReadonlyArray<Hit> | ((query: string) => ReadonlyArray<Hit>)): void
  /** The `q` of every search request, in order. */
  searches(): ReadonlyArray<string>
  /** The paths of every page request, in order. */
  pageRequests(): ReadonlyArray<string>
}

/** A page's reply: an HTML document with this title and body. */
export const html = (title: string, body: string, status = 200): FakeReply => ({
  type: "text",
  status,
  contentType: "text/html; charset=utf-8",
  body: `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`
})

export const redirect = (location: string, status = 302): FakeReply => ({
  type: "text",
  status,
  contentType: "text/plain",
  body: `see ${location}`,
  headers: { location }
})

export const reply = { ...baseReply, html, redirect }

const queryOf = (request: RecordedRequest): string | undefined => {
  const url = new URL(request.path, "http://fake.invalid")
  return url.pathname === "/search" ? url.searchParams.get("q") ?? "" : undefined
}

export const start = async (): Promise<FakeWeb> => {
  const pages = new Map<string, FakeReply>()
  let hits: (query: string) => ReadonlyArray<Hit> = () => []

  const http = await startFakeHttp({
    name: "FakeWeb",
    route: (request) => {
      const query = queryOf(request)
      if (query !== undefined) return baseReply.json({ query, results: hits(query) })
      return pages.get(request.path) ?? html("Not found", "<p>no such page</p>", 404)
    }
  })
  const origin = `http://127.0.0.1:${http.port}`

  return {
    ...http,
    origin,
    pageUrl: (path) => `${origin}${path}`,
    page: (path, answer) => void pages.set(path, answer),
    results: (given) => void (hits = typeof given === "function" ? given : () => given),
    searches: () => http.requests.flatMap((r) => {
      const query = queryOf(r)
      return query === undefined ? [] : [query]
    }),
    pageRequests: () => http.requests.filter((r) => queryOf(r) === undefined).map((r) => r.path)
  }
}

export const scoped: Effect.Effect<FakeWeb, never, Scope.Scope> = scopedFake(start)
