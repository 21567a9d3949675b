/**
 * The host routes of the control plane (docs/planner.md): a host agent's
 * heartbeat, task claim, lease renewal and result. Every one takes the host's
 * bearer token (`HostAuth`), which the server binds to the host the request
 * names: a token of another host, or a task not assigned to that host, is a
 * 403, decided before anything else happens.
 *
 * Heartbeat and claim take no payload: the contract's `{}` body, or none at
 * all, is accepted (and ignored).
 */
import { Context } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, HttpApiSecurity, OpenApi } from "effect/http-api"
import { RequestErrors } from "./ChatApi.ts"
import {
  anyRouteErrors,
  bodyErrors,
  DatabaseUnavailable,
  Forbidden,
  InvalidRequest,
  LeaseLost,
  NotFound,
  TaskNotFound,
  Unauthenticated
} from "./Errors.ts"
import {
  ClaimResponse,
  HeartbeatResponse,
  HostId,
  LeaseRequest,
  LeaseResponse,
  ResultRequest,
  TaskId,
  TaskView
} from "./Planner.ts"

/** The host whose token authenticated the request. */
export class CurrentHost extends Context.Service<CurrentHost, { readonly hostId: HostId; readonly name: string }>()(
  "switchboard/domain/CurrentHost"
) {}

const hostToken: HttpApiSecurity.Http = HttpApiSecurity.annotate(
  HttpApiSecurity.bearer,
  OpenApi.Description,
  "`Authorization: Bearer <host token>`: the token `POST /admin/hosts` issued for the host, always required"
)

/**
 * `Authorization: Bearer <host token>`: missing or unknown → 401
 * `unauthenticated`. Not `requiredForClient`: a client adds the bearer header
 * itself (as with `ChatAuth`), so one typed client serves every route.
 */
export class HostAuth extends HttpApiMiddleware.Service<HostAuth, { provides: CurrentHost; requires: never }>()(
  "switchboard/domain/HostAuth",
  { security: { hostToken }, error: Unauthenticated }
) {}

export class HostsApi extends HttpApiGroup.make("hosts")
  .add(
    HttpApiEndpoint.post("heartbeat", "/internal/hosts/:hostId/heartbeat", {
      params: { hostId: HostId },
      success: HeartbeatResponse,
      error: [...anyRouteErrors, InvalidRequest, NotFound, Forbidden, DatabaseUnavailable]
    }).annotateMerge(OpenApi.annotations({
      summary: "Host heartbeat",
      description: "Records that the host is alive (its `lastHeartbeatAt`) and answers the server's time."
    })),
    HttpApiEndpoint.post("claim", "/internal/hosts/:hostId/claim", {
      params: { hostId: HostId },
      success: [ClaimResponse, HttpApiSchema.NoContent],
      error: [...anyRouteErrors, InvalidRequest, NotFound, Forbidden, DatabaseUnavailable]
    }).annotateMerge(OpenApi.annotations({
      summary: "Claim the oldest queued task",
      description: "Takes the oldest task this host may run (reserved for it, or for any host) with a lease; " +
        "a task whose lease expired is claimed again as `attempt + 1`. Two hosts never get the same task. " +
        "204 when none is queued."
    })),
    HttpApiEndpoint.post("lease", "/internal/tasks/:taskId/lease", {
      params: { taskId: TaskId },
      payload: LeaseRequest,
      success: LeaseResponse,
      error: [...anyRouteErrors, ...bodyErrors, NotFound, Forbidden, TaskNotFound, LeaseLost, DatabaseUnavailable]
    }).annotateMerge(OpenApi.annotations({
      summary: "Renew a task's lease",
      description: "Extends the lease of the host's current attempt. 409 `lease_lost` when the lease already " +
        "expired or the attempt is not the current one: the host must stop working on it."
    })),
    HttpApiEndpoint.post("result", "/internal/tasks/:taskId/result", {
      params: { taskId: TaskId },
      payload: ResultRequest,
      success: TaskView,
      error: [...anyRouteErrors, ...bodyErrors, NotFound, Forbidden, TaskNotFound, LeaseLost, DatabaseUnavailable]
    }).annotateMerge(OpenApi.annotations({
      summary: "Report a task's result",
      description: "Makes the task terminal (`succeeded` or `failed`, with `terminalAt`); answers the task. " +
        "Only the current attempt, under a live lease, may report (else 409 `lease_lost`)."
    }))
  )
  .middleware(HostAuth)
  .middleware(RequestErrors)
  .annotateMerge(OpenApi.annotations({
    description: "The host agent's routes: `Authorization: Bearer <host token>` (issued by `POST /admin/hosts`), " +
      "always required. A missing or unknown token is a 401; a token of another host than the one the request " +
      "names, or a task not assigned to that host, a 403."
  }))
{}
