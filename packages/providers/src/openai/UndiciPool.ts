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
import type { ProviderError } from "../ProviderAdapter.ts"
import {
  declaredTooLarge,
  ERROR_BODY_BYTES,
  errorCodeOf,
  invalidJsonError,
  networkError,
  readBounded,
  statusError,
  timeoutError,
  tooLargeError
} from "../ProviderHttp.ts"
import { describeCause } from "../Redact.ts"

/** Enough sockets for the benchmarked concurrency, with room to spare. */
const CONNECTIONS = 64

// undici's own timers fire as errors; these are the ones that mean "too slow", not "unreachable".
const timeoutCodes = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"])

const failureOf = (cause: unknown, secrets: ReadonlyArray<string>): ProviderError => {
  const code = errorCodeOf(cause)
  const description = describeCause(cause, secrets)
  return code !== undefined && timeoutCodes.has(code) ? timeoutError(description) : networkError(description, code)
}


type Answer =
  | { readonly _tag: "Body"; readonly status: number; readonly text: string }
  | { readonly _tag: "TooLarge" }

export interface UndiciPoolOptions {
  /** Scheme, host and port of every URL posted to, e.g. `https://api.anthropic.com`. */
  readonly origin: string
  /** Sent with every request (credentials, API version); a request's own headers override them. */
  readonly headers: Readonly<Record<string, string>>
  /** What no error message may contain (the API key). */
  readonly secrets: ReadonlyArray<string>
  /** The most read of one answer (`LLM_MAX_RESPONSE_BYTES`): past it the request is aborted, `TooLarge`. */
  readonly maxResponseBytes: number
}

export interface UndiciPool {
  /**
   * POST `body` to `url` (on the pool's origin). Succeeds with the decoded JSON
   * of a 2xx answer, not yet validated; fails with `Status` (non-2xx),
   * `InvalidResponse` (not JSON), `TooLarge` (over `maxResponseBytes`) or
   * `Network` / `Timeout` (the request itself).
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
export const wrap = (pool: Pool, options: Pick<UndiciPoolOptions, "headers" | "secrets" | "maxResponseBytes">): UndiciPool => {
  const max = options.maxResponseBytes
  /**
   * One POST. A body within its bound is read whole, so the socket goes back to the pool; one past
   * it is cut off (the socket closed), so a flood costs the bound and no more.
   */
  const post = (url: URL, headers: Readonly<Record<string, string>>, body: string | FormData, extra: ReadonlyArray<string> = []) => {
    const secrets = extra.length === 0 ? options.secrets : [...options.secrets, ...extra]
    return Effect.tryPromise({
      try: async (signal): Promise<Answer> => {
        const response = await pool.request({
          method: "POST",
          path: `${url.pathname}${url.search}`,
          headers: { ...options.headers, ...headers },
          body,
          signal
        })
        const status = response.statusCode
        const ok = status >= 200 && status <= 299
        const contentLength = response.headers["content-length"]
        if (ok && declaredTooLarge(typeof contentLength === "string" ? contentLength : undefined, max)) {
          response.body.destroy()
          return { _tag: "TooLarge" }
        }
        // An error answer is only quoted in the log: its head is enough.
        const read = await readBounded(response.body, ok ? max : Math.min(max, ERROR_BODY_BYTES), () => response.body.destroy())
        return ok && read.truncated ? { _tag: "TooLarge" } : { _tag: "Body", status, text: read.text }
      },
      catch: (cause) => failureOf(cause, secrets)
    }).pipe(
      Effect.flatMap((answer) => {
        if (answer._tag === "TooLarge") return Effect.fail(tooLargeError(max))
        const { status, text } = answer
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
