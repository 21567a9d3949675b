/**
 * The planner decision route: binds the host token to the request's `hostId` (403), holds the
 * host to `PLANNER_HOST_RPM` (429, nothing called or stored), then decides.
 */
import { Api } from "@switchboard/domain"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { requireHost } from "../hosts/HostsHttp.ts"
import { RateLimits } from "../limits/RateLimits.ts"
import { PlannerDecisions } from "./PlannerDecisions.ts"

export const PlannerHttp = HttpApiBuilder.group(Api, "planner", Effect.fn(function*(handlers) {
  const planner = yield* PlannerDecisions
  const limits = yield* RateLimits
  return handlers.handle("decision", ({ payload }) =>
    requireHost(payload.hostId).pipe(Effect.andThen(limits.plannerDecision(payload.hostId, planner.decide(payload)))))
}))
