/**
 * Every error a client can receive is JSON `{ error, code }` (docs/errors.md) — including the ones the router and body parser produce before any
 * handler runs: unknown route (404), known route with another method (405,
 * with `Allow`), body over the limit (413), a JSON route called with another
 * content type (415), a database that cannot be reached (503, with
 * `Retry-After`), and anything unexpected (500, logged, never a stack trace
 * on the wire). It also answers `OPTIONS` (204 with `Allow`, the CORS
 * preflight included) and adds the CORS headers of `CORS_ORIGINS` to every
 * answer, errors included, so a browser page can read why it was refused.
 */
import { maxRequestBodyBytes } from "@switchboard/domain"
import { ByteSize, Cause, Effect, Layer } from "effect"
import { HttpIncomingMessage, HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse, Multipart } from "effect/http"
import { CorsConfig, corsHeaders, isPreflight, preflightHeaders } from "./Cors.ts"

export const MAX_BODY_BYTES = maxRequestBodyBytes

/**
 * The body limit as the platform reads it (`HttpIncomingMessage.MaxBodySize`;
 * without one it reads any chunked body whole), provided once to the layer
 * that serves the app (`Server.ts`, the test servers), so every request's
 * fiber starts with it instead of each request building a new fiber context
 * for it here, under everything the router and the HttpApi add to it.
 */
export const BodyLimitLive = Layer.succeed(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(MAX_BODY_BYTES))

/** The server's body limit, or, when whoever serves the app did not provide one, this layer's own. */
const withBodyLimit = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.withFiber((fiber) =>
    fiber.getRef(HttpIncomingMessage.MaxBodySize) === undefined
      ? Effect.provideService(effect, HttpIncomingMessage.MaxBodySize, ByteSize.bytes(MAX_BODY_BYTES))
      : effect
  )

interface RouteShape {
  readonly method: string
  readonly pattern: RegExp
  /** Content types the route's payload accepts; empty when it takes no body. */
  readonly contentTypes: ReadonlyArray<string>
}

const toPattern = (path: string) =>
  new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z0-9_]+/g, "[^/]+")}/?$`)

/** The routes of an HttpApi (plus extra ones such as the docs), for 405 and 415 decisions. */
export const routesOf = (api: object, extra: ReadonlyArray<{ method: string; path: string }> = []) => {
  const routes: Array<RouteShape> = []
  type Endpoint = { method: string; path: string; payload: ReadonlyMap<string, unknown> }
  const groups = (api as { groups: Record<string, { endpoints: Record<string, Endpoint> }> }).groups
  for (const group of Object.values(groups)) {
    for (const endpoint of Object.values(group.endpoints)) {
      routes.push({ method: endpoint.method, pattern: toPattern(endpoint.path), contentTypes: [...endpoint.payload.keys()] })
    }
  }
  for (const route of extra) routes.push({ method: route.method, pattern: toPattern(route.path), contentTypes: [] })
  return routes
}

const body = (status: number, error: string, code: string, headers?: Record<string, string>) =>
  HttpServerResponse.jsonUnsafe({ error, code }, { status, ...(headers ? { headers } : {}) })

const DEFAULTS: Record<number, readonly [string, string]> = {
  400: ["Invalid request", "invalid_request"],
  401: ["Unauthenticated", "unauthenticated"],
  403: ["Forbidden", "forbidden"],
  404: ["Not found", "not_found"],
  413: [`Request body larger than ${MAX_BODY_BYTES} bytes`, "payload_too_large"],
  415: ["Unsupported content type", "unsupported_media_type"],
  499: ["Client closed the request", "client_closed_request"],
  500: ["Internal server error", "internal_error"],
  503: ["Service unavailable", "unavailable"]
}

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

/** `Allow` of a path: its routes' methods, HEAD wherever GET is, and OPTIONS (answered here). */
const allowOf = (matching: ReadonlyArray<RouteShape>) => {
  const methods = new Set(matching.map((r) => r.method))
  if (methods.has("GET")) methods.add("HEAD")
  methods.add("OPTIONS")
  const order = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
  return [...methods].sort((a, b) => order.indexOf(a) - order.indexOf(b)).join(", ")
}

const contentTypeOf = (response: HttpServerResponse.HttpServerResponse) =>
  (response.body as { contentType?: string }).contentType ?? response.headers["content-type"] ?? ""

/** A multipart body over a size limit (the body limit applies to the parser too). */
const isMultipartTooLarge = (failure: unknown) =>
  Multipart.isMultipartError(failure) &&
  (failure.reason._tag === "BodyTooLarge" || failure.reason._tag === "FileTooLarge" || failure.reason._tag === "FieldTooLarge")

/**
 * The routes whose pattern matches a path, remembered per path: every request
 * asks, and most ask for the same few paths. Bounded: once `limit` paths are
 * remembered (ids in paths make them many), it starts over.
 */
export const routeMatcher = (routes: ReadonlyArray<RouteShape>, limit = 1024) => {
  const known = new Map<string, ReadonlyArray<RouteShape>>()
  return (path: string): ReadonlyArray<RouteShape> => {
    let matching = known.get(path)
    if (matching === undefined) {
      matching = routes.filter((r) => r.pattern.test(path))
      if (known.size >= limit) known.clear()
      known.set(path, matching)
    }
    return matching
  }
}

export const layerJsonErrors = (routes: ReadonlyArray<RouteShape>) =>
  Layer.unwrap(Effect.gen(function*() {
    const cors = yield* CorsConfig
    const matcher = routeMatcher(routes)
    return (HttpRouter.middleware as unknown as AnyMiddleware)((httpEffect) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const answer = yield* answerWithJsonErrors(matcher, request, httpEffect)
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

const answerWithJsonErrors = (
  matchingRoutes: (path: string) => ReadonlyArray<RouteShape>,
  request: HttpServerRequest.HttpServerRequest,
  httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>
) =>
  Effect.gen(function*() {
    // The router ends the path at `?` and at `;` (find-my-way's matrix parameters): so does this layer.
    const path = request.url.split(/[?;]/)[0] ?? "/"
    const matching = matchingRoutes(path)
    const route = matching.find((r) => r.method === request.method)

    if (matching.length > 0 && route === undefined) {
      const allow = allowOf(matching)
      if (request.method === "OPTIONS") return HttpServerResponse.empty({ status: 204, headers: { allow } })
      // HEAD of a GET route is the router's (the GET handler, no body); of any other route, a 405 like GET's.
      if (!(request.method === "HEAD" && matching.some((r) => r.method === "GET"))) {
        return body(405, `Method ${request.method} not allowed on ${path} (allowed: ${allow})`, "method_not_allowed", { allow })
      }
    }

    const length = Number(request.headers["content-length"] ?? "0")
    if (length > MAX_BODY_BYTES) return body(413, DEFAULTS[413]![0], "payload_too_large")

    const hasBody = length > 0 || request.headers["transfer-encoding"] !== undefined
    if (route !== undefined && route.contentTypes.length > 0) {
      const type = (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
      const wanted = route.contentTypes.join(" or ")
      // A given type is checked even on an empty body, so the answer names the type the route wants.
      if ((type !== "" || hasBody) && !route.contentTypes.includes(type)) {
        return body(415, `Content-Type must be ${wanted}${type ? `, got ${type}` : ""}`, "unsupported_media_type")
      }
      // No type, no body: a JSON route decodes "nothing" into a 400 naming what is missing; others say what they take.
      if (type === "" && !route.contentTypes.includes("application/json")) {
        return body(400, `Invalid request body: empty; expected ${wanted}`, "invalid_request")
      }
    }

    const response = yield* httpEffect.pipe(
      withBodyLimit,
      Effect.catchCause((cause) =>
        Effect.gen(function*() {
          // Body read failures surface as defects from the payload decoder: look at the squashed cause.
          const failure = Cause.squash(cause)
          if (HttpServerError.isHttpServerError(failure)) {
            const reason = failure.reason as { _tag: string; reason?: string }
            if (reason._tag === "RequestParseError" && reason.reason === "BodyTooLarge") {
              return body(413, DEFAULTS[413]![0], "payload_too_large")
            }
            if (reason._tag === "RequestParseError") return body(400, "Invalid request body: could not be read", "invalid_request")
          }
          if (isMultipartTooLarge(failure)) return body(413, DEFAULTS[413]![0], "payload_too_large")
          if (isDatabaseUnavailable(failure)) {
            yield* Effect.logError("database unavailable", cause)
            return body(503, "The database is unavailable; retry shortly", "database_unavailable", { "retry-after": "1" })
          }
          const [response] = yield* HttpServerError.causeResponse(cause)
          if (response.status >= 500) yield* Effect.logError("request failed", cause)
          return response
        })
      )
    )
    // The framework's own refusals come empty or as plain text: every error body is JSON.
    if (response.status >= 400 && (isEmpty(response) || !contentTypeOf(response).includes("json"))) {
      const [error, code] = DEFAULTS[response.status] ?? [`HTTP ${response.status}`, `http_${response.status}`]
      const headers = response.headers["allow"] === undefined ? undefined : { allow: response.headers["allow"] }
      return withChallenge(body(response.status, response.status === 404 ? `No route for ${request.method} ${path}` : error, code, headers))
    }
    return withChallenge(response)
  })

/** Every 401 names the scheme it wants (RFC 9110, 11.6.1): the bearer token of the route's auth middleware. */
const withChallenge = (response: HttpServerResponse.HttpServerResponse) =>
  response.status === 401 && response.headers["www-authenticate"] === undefined
    ? HttpServerResponse.setHeader(response, "www-authenticate", `Bearer realm="switchboard"`)
    : response
