/**
 * `Planner`: the host agent's only way to choose an action — one decision
 * per request. A port so the planner loop runs the same over the cloud proxy
 * (`CloudProxyPlanner.ts`: POST /internal/planner/decision with the host
 * token, no provider key on the host) and over a provider called directly
 * (`DirectPlanner.ts`: the host's own key), and over a scripted fake in tests.
 *
 * A failure is typed and never papered over: the loop retries it a bounded
 * number of times when `retryable`, then reports the task failed. No layer may
 * turn a failure into a default action.
 */
import { Context, Data, Layer } from "effect"
import type { Effect } from "effect"
import type { PlannerTool } from "./HostTool.ts"
import type { Screenshot } from "./Screenshot.ts"

export interface DecisionRequest {
  readonly taskId: string
  readonly attempt: number
  readonly systemPrompt: string
  readonly userPrompt: string
  readonly tools: ReadonlyArray<PlannerTool>
  readonly screenshot?: Screenshot
}

export interface Decision {
  readonly toolName: string
  readonly arguments: Readonly<Record<string, unknown>>
  /** The cloud's step index for `(taskId, attempt)`; absent with the direct transport (nothing is logged). */
  readonly stepIndex?: number
}

export class PlannerError extends Data.TaggedError("PlannerError")<{
  readonly message: string
  /** The cloud's error code (`provider_error`, `no_tool_call`, `lease_lost`, …) or the direct planner's own. */
  readonly code?: string
  readonly status?: number
  /** Worth asking again (a provider hiccup, a bad answer); not when the request itself is refused. */
  readonly retryable: boolean
  /** The least wait before asking again, when the server said (a 429 `rate_limited`'s or a 503 `overloaded`'s `retryAfter`). */
  readonly retryAfterMs?: number
}> {}

export class Planner extends Context.Service<Planner, {
  decide(request: DecisionRequest): Effect.Effect<Decision, PlannerError>
}>()("switchboard/host-agent/Planner") {
  /** A planner answering with `decide`: tests script decisions with it. */
  static readonly layerTest = (
    decide: (request: DecisionRequest) => Effect.Effect<Decision, PlannerError>
  ): Layer.Layer<Planner> => Layer.succeed(Planner, Planner.of({ decide }))
}
