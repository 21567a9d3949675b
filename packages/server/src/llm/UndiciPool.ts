/**
 * A keep-alive `undici` Pool to one provider origin, and the one request the
 * pooled transports make: POST a body, read the whole answer, hand back its
 * decoded JSON, and map every failure to a redacted `ProviderError`
 * (`ProviderHttp`). `UndiciTransport` (Chat Completions) and the `anthropic`
 * adapter (Messages) are this pool plus their own URLs and headers.
 *
 * The SDK's own request path (fetch) costs several times more CPU per call:
 * `npm run bench` measures the chat route over both OpenAI transports against
 * a pass-through proxy.
 *
 * `make` ties a pool to the caller's scope (a layer's, in practice): it is
 * destroyed, in-flight requests aborted, when that scope closes. `wrap` puts
 * the same request path over a pool someone else owns (`ProviderPools`, which
 * keeps one pool per origin for callers whose credentials change per request:
 * those pass their headers, and the secrets to redact, with each request).
 */
import { Effect } from "effect"
import type { Scope } from "effect"
import { Pool } from "undici"
import type { FormData } from "undici"
import type { ProviderError } from "./ProviderAdapter.ts"
import { invalidJsonError, networkError, statusError, timeoutError } from "./ProviderHttp.ts"
import { describeCause } from "./Redact.ts"

/** Enough sockets for the benchmarked concurrency, with room to spare. */
const CONNECTIONS = 64

// undici's own timers fire as errors; these are the ones that mean "too slow", not "unreachable".
const timeoutCodes = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"])

const failureOf = (cause: unknown, secrets: ReadonlyArray<string>): ProviderError => {
  const code = (cause as { code?: unknown } | null)?.code
  const description = describeCause(cause, secrets)
  return typeof code === "string" && timeoutCodes.has(code) ? timeoutError(description) : networkError(description)
}

export interface UndiciPoolOptions {
  /** Scheme, host and port of every URL posted to, e.g. `https://api.anthropic.com`. */
  readonly origin: string
  /** Sent with every request (credentials, API version); a request's own headers override them. */
  readonly headers: Readonly<Record<string, string>>
  /** What no error message may contain (the API key). */
  readonly secrets: ReadonlyArray<string>
}

export interface UndiciPool {
  /**
   * POST `body` to `url` (on the pool's origin). Succeeds with the decoded JSON
   * of a 2xx answer, not yet validated; fails with `Status` (non-2xx),
   * `InvalidResponse` (not JSON) or `Network` / `Timeout` (the request itself).
   * Interrupting the effect aborts the request.
   */
  post(
    url: URL,
    headers: Readonly<Record<string, string>>,
    body: string | FormData,
    /** Redacted from error messages besides the pool's own `secrets` (a per-request credential). */
    secrets?: ReadonlyArray<string>
  ): Effect.Effect<unknown, ProviderError>
}

/** A keep-alive pool to `origin`, with no deadline of its own (see `withDeadline`). */
export const newPool = (origin: string): Pool =>
  new Pool(origin, {
    connections: CONNECTIONS,
    // The adapter's deadline (LLM_TIMEOUT_MS, `ProviderHttp.withDeadline`) is the only one: it aborts the request.
    headersTimeout: 0,
    bodyTimeout: 0
  })

/** The request path over an existing pool. */
export const wrap = (pool: Pool, options: Pick<UndiciPoolOptions, "headers" | "secrets">): UndiciPool => {
  /** One POST; the whole body is read either way, so the socket goes back to the pool. */
  const post = (url: URL, headers: Readonly<Record<string, string>>, body: string | FormData, extra: ReadonlyArray<string> = []) => {
    const secrets = extra.length === 0 ? options.secrets : [...options.secrets, ...extra]
    return Effect.tryPromise({
      try: async (signal) => {
        const response = await pool.request({
          method: "POST",
          path: `${url.pathname}${url.search}`,
          headers: { ...options.headers, ...headers },
          body,
          signal
        })
        return { status: response.statusCode, text: await response.body.text() }
      },
      catch: (cause) => failureOf(cause, secrets)
    }).pipe(
      Effect.flatMap(({ status, text }) => {
        if (status < 200 || status > 299) return Effect.fail(statusError(status, text, secrets))
        try {
          return Effect.succeed(JSON.parse(text) as unknown)
        } catch {
          return Effect.fail(invalidJsonError(text, secrets))
        }
      })
    )
  }
  return { post }
}

export const make = (options: UndiciPoolOptions): Effect.Effect<UndiciPool, never, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(Effect.sync(() => newPool(options.origin)), (p) => Effect.promise(() => p.destroy())),
    (pool) => wrap(pool, options)
  )
