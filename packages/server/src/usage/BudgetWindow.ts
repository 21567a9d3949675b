/**
 * The window a daily token budget is checked over (docs/usage.md), a host's and a user's alike: the
 * current hour and the 24 before it, so never less than the last 24 hours, read from the shared
 * hourly rows plus what this replica counted and has not flushed yet.
 */
import { BudgetExceeded } from "@switchboard/domain"
import { Config } from "effect"
import { wholeNumber } from "../process/Accepts.ts"
import { optionalText, setting } from "../process/Setting.ts"

import type { UsageLedger } from "./UsageLedger.ts"
import type { UsageKey, UsageWindow } from "./UsageRepo.ts"
import { HOUR_MS, hourOf } from "./UsageRepo.ts"

/** A daily budget's variable: blank is unset and the value may be padded. */
const dailyTokens = (name: string, whose: string) =>
  setting({
    name,
    expected: `a whole number of tokens, 0 or more (${whose} per 24 hours; unset: none)`,
    accepts: wholeNumber(0),
    blankIsUnset: true
  }, (variable) => optionalText(variable).pipe(Config.map((value) => value === undefined ? undefined : Number(value))))

export const HostDailyTokensSetting = dailyTokens("PLANNER_HOST_DAILY_TOKENS", "a host's default budget")
export const UserDailyTokensSetting = dailyTokens("USER_DAILY_TOKENS", "every user's budget")

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

