/**
 * Hosts' budgets of planner tokens (docs/usage.md). A host's budget is its
 * own (`PUT /admin/hosts/{hostId}/budget`) or else `PLANNER_HOST_DAILY_TOKENS`
 * (unset: none). Before a decision's provider call, when a budget applies,
 * the host's input and output tokens over the window — the current hour and
 * the 24 before it, so never less than the last 24 hours — are read from the
 * shared rows, plus what this replica counted and has not flushed; at or over
 * the budget the decision is refused with 429 `budget_exceeded`. Every
 * replica reads the same rows, so every replica refuses alike; the calls of
 * the last second on other replicas may not be in them yet, and decisions
 * already in flight finish — a host can pass its budget by those, never by
 * more.
 */
import type { HostBudget } from "@switchboard/domain"
import type { BudgetExceeded, HostNotFound } from "@switchboard/domain"
import { hostNotFound } from "../hosts/HostsRepo.ts"
import { Clock, Context, Effect, Layer } from "effect"
import { HostDailyTokensSetting, overBudget, windowStart, withPending } from "./BudgetWindow.ts"
import { UsageLedger } from "./UsageLedger.ts"
import { UsageRepo } from "./UsageRepo.ts"
import type { HostBudgetRow } from "./UsageRepo.ts"

export class HostBudgets extends Context.Service<HostBudgets, {
  /**
   * Fails when the host's tokens in the window reached its budget. `own`: the host's own budget as
   * the decision's first statement read it; with neither it nor a default, nothing is read.
   */
  check(hostId: string, own: number | null): Effect.Effect<void, BudgetExceeded>
  view(hostId: string): Effect.Effect<HostBudget, HostNotFound>
  set(hostId: string, dailyTokens: number | null): Effect.Effect<HostBudget, HostNotFound>
}>()("switchboard/server/usage/HostBudgets") {
  static readonly layer = Layer.effect(HostBudgets, Effect.gen(function*() {
    const repo = yield* UsageRepo
    const ledger = yield* UsageLedger
    const defaultDailyTokens = (yield* HostDailyTokensSetting.config) ?? null

    /** The host's budget row with this replica's unflushed calls added. */
    const read = (hostId: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const fromHour = windowStart(now)
        const row = yield* repo.hostBudget(hostId, fromHour)
        if (row === undefined) return undefined
        const merged: HostBudgetRow = { dailyTokens: row.dailyTokens, ...withPending(row, ledger, (key) => key.hostId === hostId, fromHour) }
        return { now, row: merged }
      })

    const viewOf = (hostId: string, row: HostBudgetRow): HostBudget => ({
      hostId,
      dailyTokens: row.dailyTokens,
      defaultDailyTokens,
      effectiveDailyTokens: row.dailyTokens ?? defaultDailyTokens,
      usedTokens: row.used
    })

    const view = (hostId: string) =>
      Effect.flatMap(read(hostId), (found) =>
        found === undefined ? Effect.fail(hostNotFound(hostId)) : Effect.succeed(viewOf(hostId, found.row)))

    return HostBudgets.of({
      check: (hostId, own) =>
        (own ?? defaultDailyTokens) === null ? Effect.void : Effect.flatMap(read(hostId), (found) => {
          // An unknown host never gets here: its token was checked first.
          if (found === undefined) return Effect.void
          const refused = overBudget(found.row, found.row.dailyTokens ?? defaultDailyTokens, found.now, (used, limit, retryAfter) =>
            `Host ${hostId} used ${used} of its ${limit} planner tokens over the last 24 hours; ` +
            `retry in ${retryAfter} seconds, or raise its budget (PUT /admin/hosts/${hostId}/budget)`)
          return refused === undefined ? Effect.void : Effect.fail(refused)
        }),
      view,
      set: (hostId, dailyTokens) =>
        Effect.flatMap(repo.setHostBudget(hostId, dailyTokens), (found) =>
          found ? view(hostId) : Effect.fail(hostNotFound(hostId)))
    })
  }))
}
