/**
 * Every error a client can receive is JSON `{ error, code }` (docs/errors.md) — including the ones the router and
 * the platform produce before or instead of any handler: unknown route (404), known route with another method
 * (405, with `Allow`), body over the limit (413), a refused content type (415: `RequestErrors.ts` says which the
 * operation takes), a database that cannot be reached (503, with `Retry-After`), and anything unexpected (500,
 * logged, never a stack trace on the wire). Every 429 carries `Retry-After`, its body's `retryAfter`. It also answers `OPTIONS` (204 with `Allow`, the CORS preflight
 * included) and adds the CORS headers of `CORS_ORIGINS` to every answer, errors included, so a browser page can
 * read why it was refused.
 *
 * The route table (`RouteTable.ts`) is consulted only where the router found no route: the router decides
 * everything else, and the framework's own refusals are only put in the contract's shape here.
 */
import { maxRequestBodyBytes, statusOfCode } from "@switchboard/domain"
import type { ErrorCode } from "@switchboard/domain"
import { ByteSize, Cause, Effect, Layer } from "effect"
import { HttpIncomingMessage, HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse, Multipart } from "effect/http"
import { CorsOriginsSetting, corsHeaders, isPreflight, preflightHeaders } from "./Cors.ts"
import type { RouteTable } from "./RouteTable.ts"

export const MAX_BODY_BYTES = maxRequestBodyBytes

/**
 * The body limit as the platform reads it (`HttpIncomingMessage.MaxBodySize`;
 * without one it reads any chunked body whole), provided once to the layer
 * that serves the app (`Server.ts`, the test servers), so every request's
 * fiber starts with it instead of each request building a new fiber context
 * for it here, under everything the router and the HttpApi add to it.
 */
export const layerBodyLimit = Layer.succeed(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(MAX_BODY_BYTES))

/** The server's body limit, or, when whoever serves the app did not provide one, this layer's own. */
const withBodyLimit = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.withFiber((fiber) =>
    fiber.getRef(HttpIncomingMessage.MaxBodySize) === undefined
      ? Effect.provideService(effect, HttpIncomingMessage.MaxBodySize, ByteSize.bytes(MAX_BODY_BYTES))
      : effect
  )

const json = (status: number, error: string, code: string, headers?: Record<string, string>) =>
  HttpServerResponse.jsonUnsafe({ error, code }, { status, ...(headers ? { headers } : {}) })

/** An error answer whose status is its code's (domain `statusOfCode`). */
const body = (code: ErrorCode, error: string, headers?: Record<string, string>) => json(statusOfCode[code], error, code, headers)

const TOO_LARGE = `Request body larger than ${MAX_BODY_BYTES} bytes`

/** The framework's own refusals (empty, or plain text) as the contract's JSON: the code and sentence of each status. */
const refusals: ReadonlyMap<number, readonly [ErrorCode, string]> = new Map(
  ([
    ["invalid_request", "Invalid request"],
    ["unauthenticated", "Unauthenticated"],
    ["forbidden", "Forbidden"],
    ["not_found", "Not found"],
    ["payload_too_large", TOO_LARGE],
    ["unsupported_media_type", "Unsupported content type"],
    ["client_closed_request", "Client closed the request"],
    ["internal_error", "Internal server error"],
    ["unavailable", "Service unavailable"]
  ] as const).map(([code, error]) => [statusOfCode[code], [code, error]])
)

/**
 * A lost or refused connection, a lock or statement timeout, a deadlock: the
 * request was fine, the database was not, and a retry may succeed.
 *
 * Not an answer the driver could not parse (a row over its `maxMessageSize`):
 * it ends the connection, so the driver reports a `ConnectionError`, but the
 * data is the problem and every retry fails the same — a bug (500, logged),
 * which the bounds on stored values exist to prevent.
 */
export const isDatabaseUnavailable = (failure: unknown) => {
  if (typeof failure !== "object" || failure === null || (failure as { _tag?: unknown })._tag !== "SqlError") return false
  const reason = (failure as { reason?: { _tag?: string; isRetryable?: boolean; operation?: string; cause?: unknown } }).reason
  if ((reason?.cause as { _tag?: unknown } | undefined)?._tag === "PgProtocolParseError") return false
  return reason?._tag === "ConnectionError" || reason?.operation === "connect" || reason?.isRetryable === true
}

const isEmpty = (response: HttpServerResponse.HttpServerResponse) => response.body._tag === "Empty"

// The router's middleware type only lets a middleware handle errors it declares; this one is
// the last line of defence and must turn *any* failure into a JSON answer, hence the cast.
type AnyMiddleware = (
  f: (effect: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>,
  options: { readonly global: true }
) => Layer.Layer<never, never, HttpRouter.HttpRouter>

const contentTypeOf = (response: HttpServerResponse.HttpServerResponse) =>
  (response.body as { contentType?: string }).contentType ?? response.headers["content-type"] ?? ""

/** A multipart body over a size limit (the body limit applies to the parser too). */
const isMultipartTooLarge = (failure: unknown) =>
  Multipart.isMultipartError(failure) &&
  (failure.reason._tag === "BodyTooLarge" || failure.reason._tag === "FileTooLarge" || failure.reason._tag === "FieldTooLarge")

export const layer = (routes: RouteTable) =>
  Layer.unwrap(Effect.gen(function*() {
    const cors = yield* CorsOriginsSetting.config
    return (HttpRouter.middleware as unknown as AnyMiddleware)((httpEffect) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const answer = yield* answerWithJsonErrors(routes, request, httpEffect)
        if (isPreflight(request.method, request.headers) && answer.status === 204) {
          return HttpServerResponse.setHeaders(
            answer,
            preflightHeaders(cors, request.headers["origin"], answer.headers["allow"] ?? "")
          )
        }
        const headers = corsHeaders(cors, request.headers["origin"])
        return Object.keys(headers).length === 0 ? answer : HttpServerResponse.setHeaders(answer, headers)
      }), { global: true })
  }))

const isRouteNotFound = (failure: unknown) =>
  HttpServerError.isHttpServerError(failure) && failure.reason._tag === "RouteNotFound"

/**
 * A request the router found no route for, when its path has routes of other methods: `OPTIONS` is answered
 * (204 with `Allow`), any other method is a 405 with `Allow`. Undefined when it is a 404 after all: no route has
 * the path, or one of its method does (the router refused the path itself: a parameter over its length).
 */
const otherMethods = (routes: RouteTable, request: HttpServerRequest.HttpServerRequest) => {
  const methods = routes.methodsOf(request.url)
  if (methods.length === 0 || methods.includes(request.method)) return undefined
  // OPTIONS is answered here, for every path that has routes.
  const allow = [...methods.filter((m) => m !== "OPTIONS"), "OPTIONS"].join(", ")
  if (request.method === "OPTIONS") return HttpServerResponse.empty({ status: 204, headers: { allow } })
  return body("method_not_allowed", `Method ${request.method} not allowed on ${pathOf(request)} (allowed: ${allow})`, { allow })
}

// The router ends the path at `?` and at `;` (find-my-way's matrix parameters): so do the sentences.
const pathOf = (request: HttpServerRequest.HttpServerRequest) => request.url.split(/[?;]/)[0] ?? "/"

const answerWithJsonErrors = (
  routes: RouteTable,
  request: HttpServerRequest.HttpServerRequest,
  httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>
) =>
  Effect.gen(function*() {
    const response = yield* httpEffect.pipe(
      withBodyLimit,
      Effect.catchCause((cause) =>
        Effect.gen(function*() {
          // Body read failures surface as defects from the payload decoder: look at the squashed cause.
          const failure = Cause.squash(cause)
          if (isRouteNotFound(failure)) {
            const answer = otherMethods(routes, request)
            if (answer !== undefined) return answer
          }
          if (HttpServerError.isHttpServerError(failure)) {
            const reason = failure.reason as { _tag: string; reason?: string }
            if (reason._tag === "RequestParseError" && reason.reason === "BodyTooLarge") return body("payload_too_large", TOO_LARGE)
            if (reason._tag === "RequestParseError") return body("invalid_request", "Invalid request body: could not be read")
          }
          if (isMultipartTooLarge(failure)) return body("payload_too_large", TOO_LARGE)
          if (isDatabaseUnavailable(failure)) {
            yield* Effect.logError("database unavailable", cause)
            return body("database_unavailable", "The database is unavailable; retry shortly", { "retry-after": "1" })
          }
          const [response] = yield* HttpServerError.causeResponse(cause)
          if (response.status >= 500) yield* Effect.logError("request failed", cause)
          return response
        })
      )
    )
    // The framework's own refusals come empty or as plain text: every error body is JSON.
    if (response.status >= 400 && (isEmpty(response) || !contentTypeOf(response).includes("json"))) {
      const headers = response.headers["allow"] === undefined ? undefined : { allow: response.headers["allow"] }
      const [code, error] = refusals.get(response.status) ?? [`http_${response.status}`, `HTTP ${response.status}`]
      const sentence = code === "not_found" ? `No route for ${request.method} ${pathOf(request)}` : error
      return withChallenge(json(response.status, sentence, code, headers))
    }
    return response.status === 429 || response.status === 503 ? withRetryAfter(response) : withChallenge(response)
  })

/**
 * A 429 or 503 (`rate_limited`, `overloaded`, or any other refusal that says when to come back) carries the wait in
 * `Retry-After` too (RFC 9110, 10.2.3): the `retryAfter` seconds of its body, which its handler
 * decided. Read back from the encoded body here, once, for every such error alike.
 */
const withRetryAfter = (response: HttpServerResponse.HttpServerResponse) => {
  if (response.headers["retry-after"] !== undefined || response.body._tag !== "Uint8Array") return response
  let retryAfter: unknown
  try {
    retryAfter = (JSON.parse(response.body.text ?? new TextDecoder().decode(response.body.body)) as { retryAfter?: unknown }).retryAfter
  } catch {
    return response
  }
  return typeof retryAfter === "number" && Number.isInteger(retryAfter) && retryAfter >= 0
    ? HttpServerResponse.setHeader(response, "retry-after", String(retryAfter))
    : response
}

/** Every 401 names the scheme it wants (RFC 9110, 11.6.1): the bearer token of the route's auth middleware. */
const withChallenge = (response: HttpServerResponse.HttpServerResponse) =>
  response.status === 401 && response.headers["www-authenticate"] === undefined
    ? HttpServerResponse.setHeader(response, "www-authenticate", `Bearer realm="switchboard"`)
    : response
