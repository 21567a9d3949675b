/**
 * Users' daily budgets of provider tokens (docs/users.md, docs/usage.md): `USER_DAILY_TOKENS`, one
 * figure for every user, counting their turns', wake turns' and jobs' tokens over the window
 * (`BudgetWindow.ts`) — the host budgets' machinery, keyed by the user.
 *
 * Checked twice over. A chat turn is refused at its route, before anything is stored, with 429
 * `budget_exceeded` and `Retry-After` (`check`). And every provider call made for a user — a turn's
 * next round, a wake turn, a sub-agent's step — is checked right before it is sent (`guarded`): past
 * the budget it is not made and fails as `budget_exceeded`, so a job stops at its next step and a
 * wake turn is retried, its steer kept. A user's call that answered is written to the shared rows
 * before the turn goes on (not a second later with the ledger's flush), and every replica reads the
 * same rows: every replica refuses alike, and a user passes the budget by the calls in flight when it
 * is reached, never by more. Unset: nothing is read, no call is checked, nothing flushed early.
 */
import type { BudgetExceeded } from "@switchboard/domain"
import { Clock, Context, Effect, Layer } from "effect"
import { ProviderAdapter, ProviderError, Transcriber } from "@switchboard/providers"
import { currentScope } from "../telemetry/GenAi.ts"
import { UserDailyTokensSetting, overBudget, windowStart, withPending } from "./BudgetWindow.ts"
import { UsageLedger } from "./UsageLedger.ts"
import { UsageRepo } from "./UsageRepo.ts"

export class UserBudgets extends Context.Service<UserBudgets, {
  /** The daily budget every user has; undefined when `USER_DAILY_TOKENS` is unset. */
  readonly dailyTokens: number | undefined
  /** Fails when the user's tokens in the window reached the budget; nothing read without one. */
  check(userId: string): Effect.Effect<void, BudgetExceeded>
}>()("switchboard/server/usage/UserBudgets") {
  static readonly layer = Layer.effect(UserBudgets, Effect.gen(function*() {
    const repo = yield* UsageRepo
    const ledger = yield* UsageLedger
    const dailyTokens = yield* UserDailyTokensSetting.config
    if (dailyTokens === undefined) return UserBudgets.of({ dailyTokens, check: () => Effect.void })

    const check = (userId: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const fromHour = windowStart(now)
        const stored = yield* repo.userWindow(userId, fromHour)
        const window = withPending(stored, ledger, (key) => key.userId === userId, fromHour)
        const refused = overBudget(window, dailyTokens, now, (used, limit, retryAfter) =>
          `Daily token budget used up: ${used} of the ${limit} tokens a user may use over 24 hours (USER_DAILY_TOKENS); ` +
          `retry in ${retryAfter} seconds`)
        if (refused !== undefined) return yield* refused
      })
    return UserBudgets.of({ dailyTokens, check })
  }))
}

/**
 * The provider as the turns, wakes and sub-agents call it, every call of a user checked against
 * the user's budget first (the user: the enclosing `invokeAgent`'s). Without a budget, the adapter
 * as it is.
 */
export const budgetedProvider = <E, R>(
  provider: Layer.Layer<ProviderAdapter | Transcriber, E, R>
): Layer.Layer<ProviderAdapter | Transcriber, E, R | UserBudgets | UsageLedger> =>
  Layer.effectContext(Effect.gen(function*() {
    const adapter = yield* ProviderAdapter
    const transcriber = yield* Transcriber
    const budgets = yield* UserBudgets
    const ledger = yield* UsageLedger
    const both = Context.make(ProviderAdapter, adapter).pipe(Context.add(Transcriber, transcriber))
    if (budgets.dailyTokens === undefined) return both
    const guarded = <A>(call: Effect.Effect<A, ProviderError>) =>
      Effect.flatMap(currentScope, (scope) =>
        scope?.userId === undefined ? call : budgets.check(scope.userId).pipe(
          Effect.mapError((refused) => new ProviderError({ reason: "BudgetExceeded", message: refused.error })),
          Effect.andThen(call),
          // Counted when it answered (`observeAdapter`, inside this): in the shared rows before the turn goes on.
          Effect.tap(() => ledger.flush)
        ))
    return Context.add(both, ProviderAdapter, ProviderAdapter.of({
      chat: (params) => guarded(adapter.chat(params)),
      streamTo: (params, sink) => guarded(adapter.streamTo(params, sink))
    }))
  })).pipe(Layer.provide(provider))
