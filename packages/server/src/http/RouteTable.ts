/**
 * The methods each path of the API has, for the answers the router cannot
 * give: when it finds no route for a request, a path that exists with other
 * methods is a 405 with `Allow` (or, for `OPTIONS`, a 204 with `Allow`), not a
 * 404.
 *
 * Built from the HttpApi's public reflection (`HttpApi.reflect`) plus the
 * routes served beside it (the docs), and matched by the router's own matcher
 * (`FindMyWay`, with the router's defaults), so a path matches here as it does
 * there: parameters, trailing slash, a query or `;…` suffix. One difference,
 * on purpose: no limit on a parameter's length, so a path whose parameter is
 * too long for the router still names the methods it has.
 */
import { FindMyWay } from "effect/http"
import { HttpApi } from "effect/http-api"
import type { HttpApiGroup } from "effect/http-api"

export interface Route {
  readonly method: string
  readonly path: `/${string}`
}

/** `Allow`'s order. */
const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const

export interface RouteTable {
  readonly routes: ReadonlyArray<Route>
  /** The methods a request URL has routes for, in `Allow`'s order (HEAD wherever GET is); empty for an unknown path. */
  readonly methodsOf: (url: string) => ReadonlyArray<string>
}

/** The routes of an HttpApi, by its public reflection, in declaration order. */
export const apiRoutes = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
): ReadonlyArray<Route> => {
  const routes: Array<Route> = []
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => routes.push({ method: endpoint.method, path: endpoint.path as Route["path"] })
  })
  return routes
}

export const makeRouteTable = (routes: ReadonlyArray<Route>): RouteTable => {
  const router = FindMyWay.make<true>({ maxParamLength: Number.MAX_SAFE_INTEGER })
  for (const route of routes) router.on(route.method, route.path, true)
  return {
    routes,
    methodsOf: (url) => {
      const found = METHODS.filter((method) => router.find(method, url) !== undefined)
      // The router answers HEAD with the GET route.
      return METHODS.filter((m) => found.includes(m) || (m === "HEAD" && found.includes("GET")))
    }
  }
}

/** The table of an HttpApi and the routes served beside it. */
export const routeTable = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  extra: ReadonlyArray<Route> = []
): RouteTable => makeRouteTable([...apiRoutes(api), ...extra])
