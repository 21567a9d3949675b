/**
 * The window a daily token budget is checked over (docs/usage.md), a host's and a user's alike: the
 * current hour and the 24 before it, so never less than the last 24 hours, read from the shared
 * hourly rows plus what this replica counted and has not flushed yet.
 */
import { BudgetExceeded } from "@switchboard/domain"
import { Config, Option } from "effect"

import type { UsageLedger } from "./UsageLedger.ts"
import type { UsageKey, UsageWindow } from "./UsageRepo.ts"
import { HOUR_MS, hourOf } from "./UsageRepo.ts"

/**
 * A daily budget's variable (`USER_DAILY_TOKENS`, `PLANNER_HOST_DAILY_TOKENS`): blank is unset and
 * the value may be padded, as the settings' check at start (Settings.ts) reads it.
 */
export const dailyTokensConfig = (name: string): Config.Config<number | undefined> =>
  Config.option(Config.String(name)).pipe(Config.map((value) => {
    const trimmed = Option.getOrUndefined(value)?.trim()
    return trimmed === undefined || trimmed === "" ? undefined : Number(trimmed)
  }))

/** Hours before the current one counted in a budget's window. */
export const WINDOW_HOURS = 24

/** The first hour a budget's window counts at `now`: the usage retention never deletes it. */
export const windowStart = (now: number): number => hourOf(now) - WINDOW_HOURS * HOUR_MS

/** The shared rows' window with this replica's unflushed counts of the same rows added. */
export const withPending = (
  stored: UsageWindow,
  ledger: UsageLedger["Service"],
  select: (key: UsageKey) => boolean,
  fromHour: number
): UsageWindow => {
  const pending = ledger.pending(select, fromHour)
  const oldest = [stored.oldestHour, pending.oldestHour].filter((h) => h !== undefined)
  return { used: stored.used + pending.used, oldestHour: oldest.length === 0 ? undefined : Math.min(...oldest) }
}

/**
 * The refusal of a call whose window reached `limit`, or undefined while it has room. `Retry-After`:
 * the oldest counted hour leaves the window when the hour after the window's length begins.
 */
export const overBudget = (
  window: UsageWindow,
  limit: number | null,
  now: number,
  say: (used: number, limit: number, retryAfter: number) => string
): BudgetExceeded | undefined => {
  if (limit === null || window.used < limit) return undefined
  const freedAt = (window.oldestHour ?? hourOf(now)) + (WINDOW_HOURS + 1) * HOUR_MS
  const retryAfter = Math.max(1, Math.ceil((freedAt - now) / 1000))
  return new BudgetExceeded({ error: say(window.used, limit, retryAfter), limit, used: window.used, retryAfter })
}

