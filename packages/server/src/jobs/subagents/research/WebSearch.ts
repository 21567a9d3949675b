/**
 * `web_search`'s transport: a SearXNG-compatible JSON search API at
 * `SEARCH_URL` — `GET {SEARCH_URL}/search?q=…&format=json` answering
 * `{ results: [{ title, url, content }] }` (SearXNG's own format; extra fields
 * are ignored). The operator configures the URL, so it is trusted as it is:
 * `fetch_url`'s address policy is for URLs a model picked, not for this one.
 */
import { Data, Effect } from "effect"
import type { Scope } from "effect"
import { Agent } from "undici"

export class WebSearchError extends Data.TaggedError("WebSearchError")<{ readonly message: string }> {}

export interface SearchHit {
  readonly title: string
  readonly url: string
  readonly content: string
}

export interface WebSearch {
  search(query: string): Effect.Effect<ReadonlyArray<SearchHit>, WebSearchError>
}

export const DEFAULT_SEARCH_TIMEOUT_MS = 10_000
/** Enough to choose what to read; more only fills the model's context. */
export const MAX_HITS = 8
const MAX_SNIPPET = 500

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The hits of an answer, or why it is not one. Results without an http(s) `url` are dropped. */
export const parseSearchAnswer = (body: unknown): ReadonlyArray<SearchHit> | string => {
  if (!isRecord(body) || !Array.isArray(body["results"])) return "the search API did not answer { results: [...] }"
  const hits: Array<SearchHit> = []
  for (const raw of body["results"]) {
    if (!isRecord(raw) || typeof raw["url"] !== "string" || !/^https?:\/\//i.test(raw["url"])) continue
    hits.push({
      title: typeof raw["title"] === "string" ? raw["title"] : raw["url"],
      url: raw["url"],
      content: typeof raw["content"] === "string" ? raw["content"].slice(0, MAX_SNIPPET) : ""
    })
    if (hits.length === MAX_HITS) break
  }
  return hits
}

export const make = (
  searchUrl: string,
  timeoutMs = DEFAULT_SEARCH_TIMEOUT_MS
): Effect.Effect<WebSearch, never, Scope.Scope> =>
  Effect.gen(function*() {
    const agent = yield* Effect.acquireRelease(
      Effect.sync(() => new Agent({ headersTimeout: timeoutMs, bodyTimeout: timeoutMs })),
      (a) => Effect.promise(() => a.destroy())
    )
    const base = searchUrl.replace(/\/+$/, "")

    const search = (query: string): Effect.Effect<ReadonlyArray<SearchHit>, WebSearchError> =>
      Effect.tryPromise({
        try: async (signal) => {
          const url = new URL(`${base}/search`)
          url.searchParams.set("q", query)
          url.searchParams.set("format", "json")
          const response = await agent.request({
            origin: url.origin,
            path: `${url.pathname}${url.search}`,
            method: "GET",
            headers: { accept: "application/json" },
            signal
          })
          const text = await response.body.text()
          if (response.statusCode < 200 || response.statusCode > 299) {
            throw new WebSearchError({ message: `the search API answered HTTP ${response.statusCode}` })
          }
          let parsed: unknown
          try {
            parsed = JSON.parse(text)
          } catch {
            throw new WebSearchError({ message: "the search API answered something that is not JSON" })
          }
          const hits = parseSearchAnswer(parsed)
          if (typeof hits === "string") throw new WebSearchError({ message: hits })
          return hits
        },
        catch: (cause) =>
          cause instanceof WebSearchError
            ? cause
            : new WebSearchError({ message: `the search API is unreachable: ${cause instanceof Error ? cause.message : String(cause)}` })
      }).pipe(
        Effect.timeoutOrElse({
          duration: timeoutMs,
          orElse: () => Effect.fail(new WebSearchError({ message: `the search API did not answer within ${timeoutMs} ms` }))
        })
      )

    return { search }
  })
