/**
 * The planner decision route: binds the host token to the request's `hostId` (403), holds the
 * host to `PLANNER_HOST_RPM` (429, nothing called or stored), then decides in a place of its own
 * (`PLANNER_MAX_CONCURRENT_DECISIONS`: past it 503 `overloaded` at once, never a queue).
 */
import { Api } from "@switchboard/domain"
import { Cause, Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { requireHost } from "../hosts/HostsHttp.ts"
import { Admission } from "../limits/Admission.ts"
import { RateLimits } from "../limits/RateLimits.ts"
import { PlannerDecisions } from "./PlannerDecisions.ts"
import { recordDecision } from "../telemetry/Metrics.ts"

/** A decision's outcome as counted: `ok`, or the code of the error answered. */
const outcomeOf = (error: unknown) => (error as { code?: unknown }).code

export const PlannerHttp = HttpApiBuilder.group(Api, "planner", Effect.fn(function*(handlers) {
  const planner = yield* PlannerDecisions
  const limits = yield* RateLimits
  const admission = yield* Admission
  return handlers.handle("decision", ({ payload }) =>
    requireHost(payload.hostId).pipe(
      Effect.andThen(admission.decision(limits.plannerDecision(payload.hostId, planner.decide(payload)))),
      Effect.tapCause((cause) => Effect.sync(() => {
        const error = cause.reasons.find((r) => r._tag === "Fail")
        recordDecision(error !== undefined ? String(outcomeOf(error.error) ?? "error") : Cause.hasInterruptsOnly(cause) ? "cancelled" : "internal_error")
      })),
      Effect.tap(() => Effect.sync(() => recordDecision("ok")))
    ))
}))
