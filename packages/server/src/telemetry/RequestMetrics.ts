/**
 * Counts every answered request by route template, method and status, and
 * times it (`Metrics.ts`): a global router middleware outside the JSON error
 * layer (`JsonErrors.ts`), so it sees each request's final answer — a 404 or
 * a 405 the router refused, a 503 of a database down, a 429 — as the client
 * does.
 *
 * The route label is the template the request matched (`/api/chats/:chatId`),
 * found by the router's own matcher over the same table the JSON error layer
 * uses (`RouteTable.ts`) — a method the path has not (the router's 405) still
 * under the path's template; a path no route has is `unmatched`, so no client
 * can grow the label set. The time is to the answer's headers: a streamed body
 * (a turn's events) may go on after it.
 */
import { Clock, Context, Effect, Exit, Layer } from "effect"
import { FindMyWay, HttpRouter, HttpServerRequest } from "effect/http"
import type { HttpServerResponse } from "effect/http"
import type { Route } from "../http/RouteTable.ts"
import { recordRequest } from "./Metrics.ts"

/**
 * The template of the route `url` matches (HEAD as GET, as the router answers it); with another
 * method, the template of the path (the router's 405); else `unmatched`.
 */
export const routeLabeler = (routes: ReadonlyArray<Route>) => {
  const router = FindMyWay.make<string>({ maxParamLength: Number.MAX_SAFE_INTEGER })
  // Every path once, whatever its methods: what a request with a method the path has not is matched against.
  const paths = FindMyWay.make<string>({ maxParamLength: Number.MAX_SAFE_INTEGER })
  const seen = new Set<string>()
  for (const route of routes) {
    router.on(route.method, route.path, route.path)
    if (seen.has(route.path)) continue
    seen.add(route.path)
    paths.on("GET", route.path, route.path)
  }
  return (method: string, url: string): string =>
    router.find(method, url)?.handler ?? (method === "HEAD" ? router.find("GET", url)?.handler : undefined) ??
      paths.find("GET", url)?.handler ?? "unmatched"
}

/** A client that went away before its answer: nginx's 499, as the JSON error layer names it. */
const CLIENT_CLOSED = 499

type Middleware = (
  f: (effect: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>) => Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, HttpServerRequest.HttpServerRequest>,
  options: { readonly global: true }
) => Layer.Layer<never, never, HttpRouter.HttpRouter>

/**
 * The middleware. Provide it to the JSON error layer (`Layer.provide`): built
 * first, it is added first, and the router runs the first global middleware
 * outermost.
 */
export const layer = (routes: ReadonlyArray<Route>) => {
  const labelOf = routeLabeler(routes)
  return (HttpRouter.middleware as unknown as Middleware)((httpEffect) =>
    Effect.withFiber((fiber) => {
      const clock = fiber.getRef(Clock.Clock)
      const start = clock.currentTimeNanosUnsafe()
      const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
      return Effect.onExit(httpEffect, (exit) => {
        const status = Exit.isSuccess(exit) ? exit.value.status : Exit.hasInterrupts(exit) ? CLIENT_CLOSED : 500
        const seconds = Number(clock.currentTimeNanosUnsafe() - start) / 1e9
        recordRequest(labelOf(request.method, request.url), request.method, status, seconds)
        return Effect.void
      })
    }), { global: true })
}
