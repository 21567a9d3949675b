/**
 * One planner decision, start to end (docs/planner.md,
 * "The decision"):
 *
 * 0. each prompt must fit the decision log (`maxStoredValueBytes`, else 413
 *    naming it): a row the database driver could not read back would make the
 *    task's decision log unreadable for good;
 * 1. the host's attempt must hold a live lease on the task (403/404/409
 *    otherwise; 409 `task_cancelled` once the operator cancelled it), and
 *    have taken fewer than `PLANNER_MAX_STEPS` decisions (409 `step_limit`) —
 *    decided before any provider is touched;
 * 2. the active provider profile, read afresh (503 `no_active_profile`), the
 *    host's budget of tokens (429 `budget_exceeded`: `usage/HostBudgets.ts`),
 *    and the profile's key, decrypted (503 `credential_unavailable`);
 * 3. one provider call, within the profile's timeout (504 `provider_timeout`;
 *    any other failure 502 `provider_error`), never retried here; an answer
 *    is counted in the usage ledger, whether it makes a decision or not;
 * 4. exactly one usable tool call (`resolveDecision`, else 502), whose
 *    arguments fit the decision log (else 502 `provider_error`, `too_large`);
 * 5. persisted with the next step index of the attempt, screenshot excluded,
 *    before answering; a lease lost meanwhile is a 409 and records nothing.
 *
 * Nothing is persisted on any failure, and no transaction or lock is held
 * across the provider call.
 */
import { PlannerProviderError, ProviderTimeout, traced } from "@switchboard/domain"
import type {
  BudgetExceeded,
  CredentialUnavailable,
  Decision,
  DecisionRequest,
  Forbidden,
  InvalidToolCall,
  MultipleToolCalls,
  NoToolCall,
  TaskCancelled,
  TaskNotFound
} from "@switchboard/domain"
import { LeaseLost, maxStoredValueBytes, NoActiveProfile, PayloadTooLarge, StepLimit } from "@switchboard/domain"
import { POSITIVE } from "../process/Accepts.ts"
import { wholeNumberSetting } from "../process/Setting.ts"
import { Context, Effect, Layer } from "effect"
import { storedBytes } from "../db/StoredSize.ts"
import { TasksRepo } from "../hosts/TasksRepo.ts"
import { callProvider, decisionParams, ProviderError, ProviderPools, publicReason, resolveDecision } from "@switchboard/providers"
import { CredentialKeys } from "../secrets/CredentialKeys.ts"
import { DecisionsRepo } from "./DecisionsRepo.ts"
import { ProfilesRepo } from "./ProfilesRepo.ts"
import { HostBudgets } from "../usage/HostBudgets.ts"
import { UsageLedger } from "../usage/UsageLedger.ts"
import { providerCall } from "../telemetry/GenAi.ts"

export type DecisionError =
  | Forbidden
  | TaskNotFound
  | LeaseLost
  | TaskCancelled
  | NoActiveProfile
  | CredentialUnavailable
  | PlannerProviderError
  | ProviderTimeout
  | NoToolCall
  | MultipleToolCalls
  | InvalidToolCall
  | PayloadTooLarge
  | BudgetExceeded
  | StepLimit

/**
 * `PLANNER_MAX_STEPS`: the most decisions one attempt of a task takes (default 500). The host agent
 * stops at its own `--max-steps` (default 30) long before; this is the server's bound on a task's
 * decision log, whatever a host does.
 */
export const MaxStepsSetting = wholeNumberSetting("PLANNER_MAX_STEPS", POSITIVE, { min: 1 }, 500)

/** What the host sees of a provider failure: the kind, never the provider's own text (it may quote the request). */
const toWireError = (error: ProviderError, timeoutMs: number): PlannerProviderError | ProviderTimeout => {
  const reason = publicReason(error)
  switch (error.reason) {
    case "Timeout":
      return new ProviderTimeout({ error: `No answer from the LLM provider within the profile's timeout of ${timeoutMs} ms` })
    case "Status":
      return new PlannerProviderError({ error: `LLM provider error: the provider answered HTTP ${error.status ?? "?"}`, reason })
    case "Network":
      return new PlannerProviderError({ error: "LLM provider error: the provider could not be reached", reason })
    case "InvalidResponse":
      return new PlannerProviderError({ error: "LLM provider error: the provider's answer could not be read", reason })
    case "TooLarge":
      return new PlannerProviderError({ error: "LLM provider error: the provider's answer is too large", reason })
    case "NotConfigured":
      return new PlannerProviderError({ error: "LLM provider error: the provider is not configured", reason })
    case "BudgetExceeded":
      // The planner's calls serve hosts, no user: its own budget check comes first (HostBudgets).
      return new PlannerProviderError({ error: "LLM provider error: the call's token budget is used up", reason })
  }
}

/** A prompt the decision log could not hold: refused before anything else (a 413 naming it). */
const oversizedPrompt = (request: DecisionRequest): PayloadTooLarge | undefined => {
  for (const path of ["systemPrompt", "userPrompt"] as const) {
    const bytes = Buffer.byteLength(request[path], "utf8")
    if (bytes > maxStoredValueBytes) {
      return new PayloadTooLarge({
        error: `Request body too large at ${path}: ${bytes} bytes; the decision log stores at most ${maxStoredValueBytes} per prompt`
      })
    }
  }
  return undefined
}

export class PlannerDecisions extends Context.Service<PlannerDecisions, {
  decide(request: DecisionRequest): Effect.Effect<Decision, DecisionError>
}>()("switchboard/server/planner/PlannerDecisions") {
  static readonly layer = Layer.effect(PlannerDecisions, Effect.gen(function*() {
    const tasks = yield* TasksRepo
    const profiles = yield* ProfilesRepo
    const decisions = yield* DecisionsRepo
    const keys = yield* CredentialKeys
    const pools = yield* ProviderPools
    const budgets = yield* HostBudgets
    const ledger = yield* UsageLedger
    const maxSteps = yield* MaxStepsSetting.config
    const stepLimit = (taskId: string) =>
      new StepLimit({
        error: `Task ${taskId}: this attempt has taken ${maxSteps} decisions, the most one attempt takes (PLANNER_MAX_STEPS); report its result`,
        taskId,
        limit: maxSteps
      })

    return PlannerDecisions.of({
      decide: Effect.fnUntraced(function*(request) {
        const { attempt, hostId, taskId } = request
        const oversized = oversizedPrompt(request)
        if (oversized !== undefined) return yield* oversized
        // The lease check, the active profile and the host's own budget in one statement; the
        // reason a lease is not held (403/404/409) is looked up only when it is not.
        const { hostDailyTokens, leaseHeld, profile, steps } = yield* profiles.activeForLease(taskId, hostId, attempt)
        if (!leaseHeld) yield* tasks.checkLease(taskId, hostId, attempt)
        if (steps >= maxSteps) return yield* stepLimit(taskId)

        if (profile === undefined) {
          return yield* new NoActiveProfile({
            error: "No provider profile is active: create one and activate it (POST /admin/provider-profiles/{profileId}/activate)"
          })
        }
        yield* budgets.check(hostId, hostDailyTokens)
        const apiKey = yield* keys.open(profile.profileId, profile.sealed)

        const params = decisionParams(request)
        const response = yield* callProvider(pools, { ...profile, apiKey }, params).pipe(
          providerCall(profile, params, ledger.count, { kind: "planner", taskId, hostId, profileId: profile.profileId }),
          Effect.tapError((error) =>
            Effect.logError("planner provider call failed", {
              profile: profile.name,
              reason: error.reason,
              status: error.status,
              cause: error.message // already redacted by the transport
            })
          ),
          Effect.mapError((error) => toWireError(error, profile.timeoutMs))
        )
        const resolved = yield* Effect.fromResult(resolveDecision(response, request.tools)).pipe(
          Effect.tapError((failure) => Effect.logWarning(`planner decision refused (${failure.code}): ${failure.error}`))
        )
        // Arguments the decision log could not hold (nor the host's task log read back): too large, recorded nowhere.
        const argumentBytes = storedBytes(resolved.arguments)
        if (argumentBytes > maxStoredValueBytes) {
          const error = new ProviderError({
            reason: "TooLarge",
            message: `the arguments of ${resolved.toolName} are ${argumentBytes} bytes of JSON, over the ${maxStoredValueBytes} a decision stores`
          })
          yield* Effect.logError("planner provider answer too large", { profile: profile.name, cause: error.message })
          return yield* toWireError(error, profile.timeoutMs)
        }

        const stepIndex = yield* decisions.record({
          taskId,
          hostId,
          attempt,
          systemPrompt: request.systemPrompt,
          userPrompt: request.userPrompt,
          toolName: resolved.toolName,
          arguments: resolved.arguments
        }, maxSteps)
        // The lease was lost during the provider call (say why), or the attempt's other steps, decided
        // meanwhile, took the last ones: record nothing.
        if (stepIndex === undefined) {
          yield* tasks.checkLease(taskId, hostId, attempt)
          if ((yield* profiles.activeForLease(taskId, hostId, attempt)).steps >= maxSteps) return yield* stepLimit(taskId)
          return yield* new LeaseLost({ error: `Lease lost on task ${taskId} during the provider call`, taskId })
        }
        return { toolName: resolved.toolName, arguments: resolved.arguments, stepIndex }
      }, traced("PlannerDecisions.decide"))
    })
  }))
}
