/**
 * The planner proxy (docs/planner.md): one tool-call decision per
 * request, from the active provider profile's provider, for a host that holds
 * no provider key. Same host token as the host routes.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { RequestErrors } from "./ChatApi.ts"
import {
  anyRouteErrors,
  bodyErrors,
  BudgetExceeded,
  CredentialUnavailable,
  DatabaseUnavailable,
  Forbidden,
  InvalidToolCall,
  LeaseLost,
  TaskCancelled,
  MultipleToolCalls,
  NoActiveProfile,
  NoToolCall,
  PlannerProviderError,
  ProviderTimeout,
  Overloaded,
  RateLimited,
  StepLimit,
  TaskNotFound
} from "./Errors.ts"
import { HostAuth } from "./HostsApi.ts"
import { Decision, DecisionRequest } from "./Planner.ts"

export class PlannerApi extends HttpApiGroup.make("planner")
  .add(
    HttpApiEndpoint.post("decision", "/internal/planner/decision", {
      payload: DecisionRequest,
      success: Decision,
      error: [
        ...anyRouteErrors,
        ...bodyErrors,
        Forbidden,
        TaskNotFound,
        LeaseLost,
        TaskCancelled,
        StepLimit,
        RateLimited,
        Overloaded,
        PlannerProviderError,
        NoToolCall,
        MultipleToolCalls,
        InvalidToolCall,
        ProviderTimeout,
        NoActiveProfile,
        CredentialUnavailable,
        BudgetExceeded,
        DatabaseUnavailable
      ]
    }).annotateMerge(OpenApi.annotations({
      summary: "One planner decision",
      description: "Calls the active provider profile's provider once (its model, base URL, timeout and stored " +
        "credential; the host's `timeoutMs` is ignored) with the prompts, the tools and the screenshot, asking " +
        "for exactly one tool call. 200 with the call and its `stepIndex` (from 0 within the task's attempt), " +
        "persisted before answering, screenshot excluded; any other outcome is a structured failure and " +
        "persists nothing. Never a default, guessed or cached decision. 429 `budget_exceeded` (with " +
        "`Retry-After`) when the host's planner tokens over the last 24 hours reached its budget."
    }))
  )
  .middleware(HostAuth)
  .middleware(RequestErrors)
  .annotateMerge(OpenApi.annotations({
    description: "The planner proxy: one tool-call decision per request, for a host agent holding no provider key. " +
      "Same host token as the host routes."
  }))
{}
