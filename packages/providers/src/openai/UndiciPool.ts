/**
 * A keep-alive `undici` Pool to one provider origin, and the two requests the
 * pooled transports make: POST a body and hand back the decoded JSON of the
 * whole answer (`post`), or its server-sent events as they come
 * (`postStream`); either maps every failure to a redacted `ProviderError`
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
import type { Dispatcher, FormData } from "undici"
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
import {
  EVENT_STREAM,
  failureWithin,
  isEventStream,
  notAnEventStreamError,
  pumpReadable,
  settled,
  sseBytes,
  streamSignal
} from "../SseAnswer.ts"
import type { EventSink, StreamDeadline } from "../SseAnswer.ts"

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
  /**
   * POST `body` asking for a streamed answer (`accept: text/event-stream`):
   * the answer's server-sent events to `onEvents` as they arrive, succeeding
   * at the body's end. Fails like `post`, with `Status` before the stream,
   * `TooLarge` once the stream passes `maxResponseBytes`, `Timeout` past the
   * deadline, or the failure `onEvents` returns. Ending early (interrupted,
   * a failure, the deadline) aborts the request: the connection is closed.
   */
  postStream(
    url: URL,
    headers: Readonly<Record<string, string>>,
    body: string,
    deadline: StreamDeadline,
    onEvents: EventSink,
    secrets?: ReadonlyArray<string>
  ): Effect.Effect<void, ProviderError>
}

/**
 * A keep-alive pool to `origin`, with no deadline of its own (see `withDeadline`) and no cap on its
 * sockets: a streamed answer holds its socket for the whole answer (tens of seconds with real
 * models), so a cap would make the next turn wait, unseen, for another's answer to end. What bounds
 * the sockets is the turns admitted (`MAX_CONCURRENT_TURNS`, `JOB_CONCURRENCY`, the planner's
 * limit); idle ones close after undici's keep-alive timeout.
 */
export const newPool = (origin: string): Pool =>
  new Pool(origin, {
    connections: null,
    // The adapter's deadline (LLM_TIMEOUT_MS, `ProviderHttp.withDeadline`) is the only one: it aborts the request.
    headersTimeout: 0,
    bodyTimeout: 0
  })

/**
 * A request's body, as bytes of its own, is all that is kept of it while the answer runs — a
 * streamed turn's whole answer: undici keeps the body it was given until then, and a string it
 * keeps twice, the string and its bytes copied into Node's shared 8 KB buffer slabs (which a few
 * bytes alive keep whole). The system prompt and the tools' schemas make a body several KB: a
 * thousand open streams kept ~7.7 KB each so (heap snapshots, docs/performance.md).
 */
const utf8 = new TextEncoder()

/** The request path over an existing pool. */
export const wrap = (pool: Pool, options: Pick<UndiciPoolOptions, "headers" | "secrets" | "maxResponseBytes">): UndiciPool => {
  const max = options.maxResponseBytes
  const secretsWith = (extra: ReadonlyArray<string>) => extra.length === 0 ? options.secrets : [...options.secrets, ...extra]
  const request = (url: URL, headers: Readonly<Record<string, string>>, body: Uint8Array | FormData, signal: AbortSignal) =>
    pool.request({
      method: "POST",
      path: `${url.pathname}${url.search}`,
      headers: { ...options.headers, ...headers },
      body,
      signal
    })
  /** The head of an answer that is not the one asked for: an error answer is only quoted in the log. */
  const readHead = (body: Dispatcher.ResponseData["body"], ok: boolean) =>
    readBounded(body, ok ? max : Math.min(max, ERROR_BODY_BYTES), () => body.destroy())

  /**
   * One POST. A body within its bound is read whole, so the socket goes back to the pool; one past
   * it is cut off (the socket closed), so a flood costs the bound and no more.
   */
  const post = (url: URL, headers: Readonly<Record<string, string>>, payload: string | FormData, extra: ReadonlyArray<string> = []) => {
    const body = typeof payload === "string" ? utf8.encode(payload) : payload
    const secrets = secretsWith(extra)
    return Effect.tryPromise({
      try: async (signal): Promise<Answer> => {
        const response = await request(url, headers, body, signal)
        const status = response.statusCode
        const ok = status >= 200 && status <= 299
        const contentLength = response.headers["content-length"]
        if (ok && declaredTooLarge(typeof contentLength === "string" ? contentLength : undefined, max)) {
          response.body.destroy()
          return { _tag: "TooLarge" }
        }
        const read = await readHead(response.body, ok)
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

  const postStream = (
    url: URL,
    headers: Readonly<Record<string, string>>,
    payload: string,
    deadline: StreamDeadline,
    onEvents: EventSink,
    extra: ReadonlyArray<string> = []
  ) => {
    // Only the bytes are seen by what runs as long as the answer: the string goes at once.
    const body = utf8.encode(payload)
    const secrets = secretsWith(extra)
    return Effect.scoped(Effect.gen(function*() {
      const signal = yield* streamSignal(deadline)
      const failure = failureWithin(signal, deadline, (cause) => failureOf(cause, secrets))
      const response = yield* Effect.tryPromise({
        try: () => request(url, { ...headers, accept: EVENT_STREAM }, body, signal.signal),
        catch: failure
      })
      const status = response.statusCode
      const ok = status >= 200 && status <= 299
      const contentType = response.headers["content-type"]
      const type = Array.isArray(contentType) ? contentType.join(", ") : contentType
      if (ok && isEventStream(type)) {
        return yield* pumpReadable(response.body, sseBytes(max, onEvents), failure).pipe(Effect.andThen(settled))
      }
      const read = yield* Effect.tryPromise({ try: () => readHead(response.body, ok), catch: failure })
      if (!ok) return yield* Effect.fail(statusError(status, read.text, secrets))
      return yield* Effect.fail(read.truncated ? tooLargeError(max) : notAnEventStreamError(type ?? "", read.text, secrets))
    }))
  }
  return { post, postStream }
}

export const make = (options: UndiciPoolOptions): Effect.Effect<UndiciPool, never, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(Effect.sync(() => newPool(options.origin)), (p) => Effect.promise(() => p.destroy())),
    (pool) => wrap(pool, options)
  )
