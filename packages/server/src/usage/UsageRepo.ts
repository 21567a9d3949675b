/**
 * Token usage in SQL (docs/usage.md): hourly rows added to by every replica,
 * read back as totals, a host's window for its budget, and pruned with the
 * decision log's retention.
 *
 * Hours are computed by the server (UTC, from the epoch) and passed in, never
 * `date_trunc` in the database: a session time zone a half hour off UTC would
 * otherwise put one call in two different hours.
 */
import type { UsageGroupBy, UsageKind, UsageRow } from "@switchboard/domain"
import { Array as Arr, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"

/** One row's key: what its calls served. Absent fields are ''. */
export interface UsageKey {
  readonly hour: number
  readonly kind: UsageKind
  readonly userId: string
  readonly chatId: string
  readonly jobId: string
  readonly hostId: string
  readonly taskId: string
  readonly profileId: string
  readonly model: string
}

export interface UsageTotals {
  calls: number
  inputTokens: number
  outputTokens: number
  cachedInputTokens: number
}

export interface UsageFilter {
  readonly fromHour: number
  readonly toMs: number
  readonly groupBy: UsageGroupBy
  readonly hostId: string | undefined
  readonly taskId: string | undefined
  readonly chatId: string | undefined
  readonly userId: string | undefined
  readonly limit: number
}

/** Tokens (input and output) since `fromHour`, with the oldest hour that has any (when one has). */
export interface UsageWindow {
  readonly used: number
  readonly oldestHour: number | undefined
}

/** A host's own budget and its window; `undefined` for a host that does not exist. */
export interface HostBudgetRow extends UsageWindow {
  readonly dailyTokens: number | null
}

export const HOUR_MS = 3_600_000

export const hourOf = (ms: number): number => Math.floor(ms / HOUR_MS) * HOUR_MS

export class UsageRepo extends Context.Service<UsageRepo, {
  /** Adds each entry's totals to its hour's row (created when absent), in one statement. */
  add(entries: ReadonlyArray<readonly [UsageKey, UsageTotals]>): Effect.Effect<void>
  /** Totals grouped by `filter.groupBy`, most tokens first, at most `limit`; calls without the grouped field left out. */
  report(filter: UsageFilter): Effect.Effect<ReadonlyArray<UsageRow>>
  hostBudget(hostId: string, fromHour: number): Effect.Effect<HostBudgetRow | undefined>
  /** A user's tokens since `fromHour`: their turns', wake turns' and jobs' (`USER_DAILY_TOKENS`). */
  userWindow(userId: string, fromHour: number): Effect.Effect<UsageWindow>
  /** Sets a host's own budget (null: none); false when there is no such host. */
  setHostBudget(hostId: string, dailyTokens: number | null): Effect.Effect<boolean>
  /** Deletes at most `limit` rows of hours before `beforeMs`; answers how many. */
  pruneBatch(beforeMs: number, limit: number): Effect.Effect<number>
}>()("switchboard/server/usage/UsageRepo") {
  static readonly layer = Layer.effect(UsageRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return UsageRepo.of({
      add: (entries) =>
        !Arr.isReadonlyArrayNonEmpty(entries) ? Effect.void : sql`
          INSERT INTO usage_hourly ${
          sql.insert(Arr.map(entries, ([key, totals]): Record<string, unknown> => ({
            hour: new Date(key.hour).toISOString(),
            kind: key.kind,
            user_id: key.userId,
            chat_id: key.chatId,
            job_id: key.jobId,
            host_id: key.hostId,
            task_id: key.taskId,
            profile_id: key.profileId,
            model: key.model,
            calls: totals.calls,
            input_tokens: totals.inputTokens,
            output_tokens: totals.outputTokens,
            cached_input_tokens: totals.cachedInputTokens
          })))
        }
          ON CONFLICT (hour, kind, user_id, chat_id, job_id, host_id, task_id, profile_id, model) DO UPDATE SET
            calls = usage_hourly.calls + excluded.calls,
            input_tokens = usage_hourly.input_tokens + excluded.input_tokens,
            output_tokens = usage_hourly.output_tokens + excluded.output_tokens,
            cached_input_tokens = usage_hourly.cached_input_tokens + excluded.cached_input_tokens`.pipe(Effect.asVoid, Effect.orDie),

      report: (f) =>
        Effect.map(
          sql<{ key: string; calls: number; input_tokens: number; output_tokens: number; cached_input_tokens: number }>`
            SELECT key, sum(calls)::float8 AS calls, sum(input_tokens)::float8 AS input_tokens,
                   sum(output_tokens)::float8 AS output_tokens, sum(cached_input_tokens)::float8 AS cached_input_tokens
            FROM (
              SELECT CASE ${f.groupBy}::text
                       WHEN 'host' THEN host_id WHEN 'task' THEN task_id WHEN 'chat' THEN chat_id
                       WHEN 'model' THEN model WHEN 'user' THEN user_id ELSE kind END AS key,
                     calls, input_tokens, output_tokens, cached_input_tokens
              FROM usage_hourly
              WHERE hour >= ${new Date(f.fromHour).toISOString()}::timestamptz
                AND hour < ${new Date(f.toMs).toISOString()}::timestamptz
                AND (${f.hostId ?? null}::text IS NULL OR host_id = ${f.hostId ?? null})
                AND (${f.taskId ?? null}::text IS NULL OR task_id = ${f.taskId ?? null})
                AND (${f.chatId ?? null}::text IS NULL OR chat_id = ${f.chatId ?? null})
                AND (${f.userId ?? null}::text IS NULL OR user_id = ${f.userId ?? null})
            ) AS counted
            WHERE key <> ''
            GROUP BY key
            ORDER BY sum(input_tokens) + sum(output_tokens) DESC, key
            LIMIT ${f.limit}`,
          (rows) =>
            rows.map((row) => ({
              key: row.key,
              calls: Number(row.calls),
              inputTokens: Number(row.input_tokens),
              outputTokens: Number(row.output_tokens),
              cachedInputTokens: Number(row.cached_input_tokens)
            }))
        ).pipe(Effect.orDie),

      // One statement: a planner decision reads it before every provider call.
      hostBudget: (hostId, fromHour) =>
        Effect.map(
          sql<{ daily_tokens: number | string | null; used: number | null; oldest: Date | string | null }>`
            SELECT h.daily_tokens::float8 AS daily_tokens, w.used, w.oldest
            FROM hosts h, LATERAL (
              SELECT sum(input_tokens + output_tokens)::float8 AS used, min(hour) AS oldest
              FROM usage_hourly
              WHERE host_id = h.id AND host_id <> '' AND hour >= ${new Date(fromHour).toISOString()}::timestamptz
                AND input_tokens + output_tokens > 0
            ) AS w
            WHERE h.id = ${hostId}`,
          ([row]) =>
            row === undefined ? undefined : {
              dailyTokens: row.daily_tokens === null ? null : Number(row.daily_tokens),
              used: Number(row.used ?? 0),
              oldestHour: row.oldest === null ? undefined : new Date(row.oldest).getTime()
            }
        ).pipe(Effect.orDie),

      // One statement, by the user's index: every call of a user with a budget reads it first.
      userWindow: (userId, fromHour) =>
        Effect.map(
          sql<{ used: number | null; oldest: Date | string | null }>`
            SELECT sum(input_tokens + output_tokens)::float8 AS used, min(hour) AS oldest
            FROM usage_hourly
            WHERE user_id = ${userId} AND user_id <> '' AND hour >= ${new Date(fromHour).toISOString()}::timestamptz
              AND input_tokens + output_tokens > 0`,
          ([row]) => ({
            used: Number(row?.used ?? 0),
            oldestHour: row?.oldest === null || row?.oldest === undefined ? undefined : new Date(row.oldest).getTime()
          })
        ).pipe(Effect.orDie),

      setHostBudget: (hostId, dailyTokens) =>
        Effect.map(
          sql<{ id: string }>`UPDATE hosts SET daily_tokens = ${dailyTokens} WHERE id = ${hostId} RETURNING id`,
          (rows) => rows.length > 0
        ).pipe(Effect.orDie),

      pruneBatch: (beforeMs, limit) =>
        Effect.map(
          sql<{ deleted: number }>`
            WITH gone AS (
              DELETE FROM usage_hourly WHERE ctid IN (
                SELECT ctid FROM usage_hourly WHERE hour < ${new Date(beforeMs).toISOString()}::timestamptz LIMIT ${limit}
              )
              RETURNING 1
            )
            SELECT count(*)::int AS deleted FROM gone`,
          ([row]) => Number(row?.deleted ?? 0)
        ).pipe(Effect.orDie)
    })
  }))
}
