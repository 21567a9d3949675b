/**
 * The `cloud-proxy` planner: each decision is one `POST
 * /internal/planner/decision` with the host token, answered by the cloud's
 * active provider profile. The host holds no provider key and reads none
 * (docs/planner.md: the cloud-proxy transport removes the need for
 * host-held provider credentials).
 *
 * Retryable: no answer at all (network) and the cloud's 5xx (`provider_error`,
 * `no_tool_call`, `multiple_tool_calls`, `invalid_tool_call`,
 * `provider_timeout`, `no_active_profile`, `credential_unavailable`). Not
 * retryable: a refused request (400, 401, 403, 404, 409 `lease_lost` or `step_limit`), and a
 * host out of its budget of tokens (429 `budget_exceeded`): the task is
 * reported failed with that reason, as docs/usage.md says. A host over
 * `PLANNER_HOST_RPM` (429 `rate_limited`), and a replica at its limit of
 * decisions in flight (503 `overloaded`, `PLANNER_MAX_CONCURRENT_DECISIONS`),
 * ask again, after the `retryAfter` the server gave at least.
 */
import type { JsonObject } from "@switchboard/domain"
import { Effect, Layer } from "effect"
import { ApiClient, describeApiFailure, isOverloaded } from "@switchboard/client"
import type { ApiFailure } from "@switchboard/client"
import { Planner, PlannerError } from "./Planner.ts"
import type { DecisionRequest } from "./Planner.ts"

/** The refusals that say when to ask again: over `PLANNER_HOST_RPM`, or a replica with too many decisions in flight. */
const asksToWait = (failure: ApiFailure): boolean => failure.code === "rate_limited" || isOverloaded(failure)

export const layerNoDeps = (hostId: string): Layer.Layer<Planner, never, ApiClient> =>
  Layer.effect(
    Planner,
    Effect.gen(function*() {
      const client = yield* ApiClient
      return Planner.of({
        decide: Effect.fn("CloudProxyPlanner.decide")(function*(request: DecisionRequest) {
          const decision = yield* client.planner.decision({
            payload: {
              hostId,
              taskId: request.taskId,
              attempt: request.attempt,
              systemPrompt: request.systemPrompt,
              userPrompt: request.userPrompt,
              tools: request.tools.map((tool) => ({
                name: tool.name,
                description: tool.description,
                parameters: tool.parameters as JsonObject
              })),
              ...(request.screenshot === undefined ? {} : { screenshot: request.screenshot })
            }
          }).pipe(
            Effect.catch((error) =>
              describeApiFailure(error).pipe(
                Effect.flatMap((failure) =>
                  Effect.fail(
                    new PlannerError({
                      message: failure.message,
                      ...(failure.code === undefined ? {} : { code: failure.code }),
                      ...(failure.status === undefined ? {} : { status: failure.status }),
                      retryable: failure.status === undefined || failure.status >= 500 || asksToWait(failure),
                      ...(asksToWait(failure) && failure.retryAfter !== undefined
                        ? { retryAfterMs: failure.retryAfter * 1000 }
                        : {})
                    })
                  )
                )
              )
            )
          )
          return { toolName: decision.toolName, arguments: decision.arguments, stepIndex: decision.stepIndex }
        })
      })
    })
  )
