/**
 * Token usage and host budgets, on the wire (docs/usage.md).
 *
 * Every provider call that answers is counted against what it served (its
 * kind, chat, job, host, task, provider profile and model), aggregated per
 * hour. Operators read the totals (`GET /admin/usage`) and give a host a
 * daily budget of planner tokens (`PUT /admin/hosts/{hostId}/budget`).
 */
import { Schema } from "effect"
import { ChatId } from "./Chat.ts"
import { HostId, TaskId, Timestamp } from "./Planner.ts"
import { UserId } from "./Users.ts"

/** What a provider call served: a chat turn, a wake turn (a steer's answer), a sub-agent step, a planner decision. */
export const UsageKind = Schema.Literals(["chat", "wake", "job", "planner"])
export type UsageKind = typeof UsageKind.Type

export const UsageGroupBy = Schema.Literals(["host", "task", "chat", "model", "kind", "user"])
export type UsageGroupBy = typeof UsageGroupBy.Type

/** An ISO-8601 time a `Date` can read (`2026-12-03T10:00:00Z`, `2026-12-03`), from 1970 on. */
export const UsageTime = Schema.String.check(Schema.makeFilter(
  (value: string) =>
    value.length <= 64 && /^\d{4}-\d{2}-\d{2}/.test(value) && Date.parse(value) >= 0
      ? undefined
      : "must be an ISO-8601 time, e.g. 2026-12-03T10:00:00Z",
  { description: "an ISO-8601 time, e.g. 2026-12-03T10:00:00Z" }
))

export const UsageQuery = {
  /** Default: 24 hours before `to`. Rounded down to its hour: usage is kept per hour. */
  from: Schema.optionalKey(UsageTime),
  /** Default: now. */
  to: Schema.optionalKey(UsageTime),
  /** Default `kind`. Calls without the grouped field (a chat turn grouped by host) are left out. */
  groupBy: Schema.optionalKey(UsageGroupBy),
  hostId: Schema.optionalKey(HostId),
  taskId: Schema.optionalKey(TaskId),
  chatId: Schema.optionalKey(ChatId),
  /** Only this user's calls (their turns, wake turns and jobs); with `chatId`, that user's chat of that id. */
  userId: Schema.optionalKey(UserId)
}

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

export const UsageRow = Schema.Struct({
  key: Schema.String,
  calls: Count,
  inputTokens: Count,
  outputTokens: Count,
  /** Part of `inputTokens` the provider served from its prompt cache (0 when it did not say). */
  cachedInputTokens: Count
})
export type UsageRow = typeof UsageRow.Type

export const UsageReport = Schema.Struct({
  /** Most tokens first; at most 1000 rows (`truncated` then says so). */
  rows: Schema.Array(UsageRow),
  /** The first hour counted. */
  from: Timestamp,
  to: Timestamp,
  groupBy: UsageGroupBy,
  truncated: Schema.Boolean
})
export type UsageReport = typeof UsageReport.Type

/** A host's own budget of planner tokens per 24 hours; null: the server's default (`PLANNER_HOST_DAILY_TOKENS`). */
export const HostBudgetRequest = Schema.Struct({
  dailyTokens: Schema.NullOr(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })))
})
export type HostBudgetRequest = typeof HostBudgetRequest.Type

export const HostBudget = Schema.Struct({
  hostId: HostId,
  /** The host's own budget; null when it has none. */
  dailyTokens: Schema.NullOr(Count),
  /** `PLANNER_HOST_DAILY_TOKENS`; null when unset. */
  defaultDailyTokens: Schema.NullOr(Count),
  /** What applies: the host's own, else the default; null: no budget. */
  effectiveDailyTokens: Schema.NullOr(Count),
  /** The host's planner tokens (input + output) in the window the budget is checked over. */
  usedTokens: Count
})
export type HostBudget = typeof HostBudget.Type
