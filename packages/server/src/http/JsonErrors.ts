/**
 * Every error a client can receive is JSON `{ error, code }` (CONTRACT.md,
 * Errors) — including the ones the router and body parser produce before any
 * handler runs: unknown route (404), known route with another method (405,
 * with `Allow`), body over the limit (413), a JSON route called with another
 * content type (415), a database that cannot be reached (503, with
 * `Retry-After`), and anything unexpected (500, logged, never a stack trace
 * on the wire).
 */
import { maxRequestBodyBytes } from "@switchboard/domain"
import { ByteSize, Cause, Effect, Layer } from "effect"
import { HttpIncomingMessage, HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"

export const MAX_BODY_BYTES = maxRequestBodyBytes

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
 * request was fine, the database was not.
 */
const isDatabaseUnavailable = (failure: unknown) => {
  if (typeof failure !== "object" || failure === null || (failure as { _tag?: unknown })._tag !== "SqlError") return false
  const reason = (failure as { reason?: { _tag?: string; isRetryable?: boolean; operation?: string } }).reason
  return reason?._tag === "ConnectionError" || reason?.operation === "connect" || reason?.isRetryable === true
}

const isEmpty = (response: HttpServerResponse.HttpServerResponse) => response.body._tag === "Empty"

// The router's middleware type only lets a middleware handle errors it declares; this one is
// the last line of defence and must turn *any* failure into a JSON answer, hence the cast.
type AnyMiddleware = (
  f: (effect: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>,
  options: { readonly global: true }
) => Layer.Layer<never, never, HttpRouter.HttpRouter>

export const layerJsonErrors = (routes: ReadonlyArray<RouteShape>) =>
  (HttpRouter.middleware as unknown as AnyMiddleware)((httpEffect) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const path = request.url.split("?")[0] ?? "/"
      const matching = routes.filter((r) => r.pattern.test(path))
      const route = matching.find((r) => r.method === request.method)

      if (matching.length > 0 && route === undefined && request.method !== "HEAD" && request.method !== "OPTIONS") {
        const allow = [...new Set(matching.map((r) => r.method))].join(", ")
        return body(405, `Method ${request.method} not allowed on ${path} (allowed: ${allow})`, "method_not_allowed", { allow })
      }

      const length = Number(request.headers["content-length"] ?? "0")
      if (length > MAX_BODY_BYTES) return body(413, DEFAULTS[413]![0], "payload_too_large")

      const hasBody = length > 0 || request.headers["transfer-encoding"] !== undefined
      if (route !== undefined && hasBody && route.contentTypes.length > 0) {
        const type = (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
        if (!route.contentTypes.includes(type)) {
          const wanted = route.contentTypes.join(" or ")
          return body(415, `Content-Type must be ${wanted}${type ? `, got ${type}` : ""}`, "unsupported_media_type")
        }
      }

      const response = yield* httpEffect.pipe(
        // Without a limit the platform reads any chunked body whole: cap every body here.
        Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(MAX_BODY_BYTES)),
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
      if (response.status >= 400 && isEmpty(response)) {
        const [error, code] = DEFAULTS[response.status] ?? [`HTTP ${response.status}`, `http_${response.status}`]
        return withChallenge(body(response.status, response.status === 404 ? `No route for ${request.method} ${path}` : error, code))
      }
      return withChallenge(response)
    }), { global: true })

/** Every 401 names the scheme it wants (RFC 9110, 11.6.1): the bearer token of the route's auth middleware. */
const withChallenge = (response: HttpServerResponse.HttpServerResponse) =>
  response.status === 401 && response.headers["www-authenticate"] === undefined
    ? HttpServerResponse.setHeader(response, "www-authenticate", `Bearer realm="switchboard"`)
    : response
