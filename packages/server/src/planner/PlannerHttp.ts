/** The planner decision route: binds the host token to the request's `hostId` (403), then decides. */
import { Api } from "@switchboard/domain"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { requireHost } from "../hosts/HostsHttp.ts"
import { answerRetryLater } from "../http/RetryAfter.ts"
import { PlannerDecisions } from "./PlannerDecisions.ts"

export const PlannerHttp = HttpApiBuilder.group(Api, "planner", Effect.fn(function*(handlers) {
  const planner = yield* PlannerDecisions
  return handlers.handle("decision", ({ payload }) =>
    requireHost(payload.hostId).pipe(Effect.andThen(planner.decide(payload)), answerRetryLater("BudgetExceeded")))
}))
