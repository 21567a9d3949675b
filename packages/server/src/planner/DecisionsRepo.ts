/**
 * The planner decision log, in SQL.
 *
 * Recording a step is one statement: it takes the next step index from the
 * task's counter (`tasks.next_step_index`, reset by each claim) only while
 * the host's attempt holds a live lease, and inserts the decision with it.
 * The task's row lock lasts that one statement, so concurrent steps of one
 * task get consecutive, unique indexes (0, 1, 2, …) without retries, and a
 * step whose lease was lost meanwhile records nothing.
 *
 * Pruning deletes in bounded batches, each a key range of the partial
 * retention index `(task_terminal_at, id)`: the batch's last key is found in
 * the index (an index-only scan of `limit` entries), then everything up to it
 * is deleted in the same statement — the rows are reached as a plain
 * `DELETE … WHERE` reaches them, with no row lock of their own beforehand
 * (`FOR UPDATE SKIP LOCKED`, the earlier form, wrote one WAL record per row
 * more than the delete: measured, about 2 × a plain DELETE of the same rows).
 *
 * Replicas sweeping at once do not wait for each other: a batch first takes
 * the sweep's advisory lock with `pg_try_advisory_xact_lock`, for the length
 * of its one statement. A batch that does not get it deletes nothing, which
 * ends that replica's sweep: another replica is sweeping, and goes on until
 * a batch of its own comes back short — nothing left to delete.
 */
import type { DecisionRecord, JsonObject } from "@switchboard/domain"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { iso, wholeMillis } from "../db/SqlTime.ts"
import { inPage, pageOf, pageSums } from "../db/SizedPages.ts"
import { traced } from "@switchboard/domain"

/** Where a page of a task's decisions starts (after `after`, `<attempt>:<stepIndex>`) and how many it holds at most. */
export interface DecisionPage {
  readonly limit: number
  readonly after?: string | undefined
}

/** Any constant shared by every replica: the key of the sweep's advisory lock. */
export const PRUNE_LOCK = 5_202_512

export interface NewDecision {
  readonly taskId: string
  readonly hostId: string
  readonly attempt: number
  readonly systemPrompt: string
  readonly userPrompt: string
  readonly toolName: string
  readonly arguments: JsonObject
}

interface Row {
  readonly task_id: string
  readonly attempt: number
  readonly step_index: number
  readonly system_prompt: string
  readonly user_prompt: string
  readonly tool_name: string
  readonly arguments: JsonObject
  readonly created_at: Date
}

export class DecisionsRepo extends Context.Service<DecisionsRepo, {
  /**
   * The step index given to the decision; `undefined` when the attempt no longer holds a live lease,
   * or has taken `maxSteps` decisions already (concurrent steps of one attempt: the caller tells which).
   */
  record(decision: NewDecision, maxSteps: number): Effect.Effect<number | undefined>
  /**
   * A page, in order of attempt, then step: at most `page.limit` decisions after `page.after`, ending
   * before the page's prompts and arguments pass `PAGE_BYTES` (db/SizedPages.ts) (one decision at least); `nextAfter`
   * when more follow.
   */
  list(taskId: string, attempt: number | undefined, page: DecisionPage): Effect.Effect<{
    readonly decisions: ReadonlyArray<DecisionRecord>
    readonly nextAfter?: string
  }>
  /**
   * Deletes at most `limit` decisions of tasks terminal for longer than `retentionMs`; answers how many
   * (none while another replica's batch holds the sweep).
   */
  pruneBatch(retentionMs: number, limit: number): Effect.Effect<number>
}>()("switchboard/server/planner/DecisionsRepo") {
  static readonly layer = Layer.effect(DecisionsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return DecisionsRepo.of({
      record: Effect.fnUntraced(function*(d, maxSteps) {
        const rows = yield* sql<{ step_index: number }>`
          WITH step AS (
            UPDATE tasks SET next_step_index = next_step_index + 1
            WHERE id = ${d.taskId} AND host_id = ${d.hostId} AND attempt = ${d.attempt}
              AND status = 'running' AND lease_expires_at > now() AND next_step_index < ${maxSteps}
            RETURNING id, attempt, next_step_index - 1 AS step_index
          )
          INSERT INTO planner_decisions (task_id, attempt, step_index, system_prompt, user_prompt, tool_name, arguments)
          SELECT id, attempt, step_index, ${d.systemPrompt}, ${d.userPrompt}, ${d.toolName}, ${JSON.stringify(d.arguments)}::jsonb
          FROM step
          RETURNING step_index`
        return rows[0]?.step_index
      }, Effect.orDie, traced("DecisionsRepo.record")),

      list: Effect.fnUntraced(function*(taskId, attempt, page) {
        const [afterAttempt, afterStep] = page.after === undefined ? [0, -1] : page.after.split(":").map(Number)
        // The page's keys and sizes first, then only the decisions kept read whole (db/SizedPages.ts).
        const rows = yield* sql<Row & { readonly fetched: number | string }>`
          WITH sized AS (
            SELECT attempt, step_index, octet_length(system_prompt) + octet_length(user_prompt) + octet_length(arguments::text) AS own
            FROM planner_decisions
            WHERE task_id = ${taskId} AND (${attempt ?? null}::int IS NULL OR attempt = ${attempt ?? null})
              AND (attempt, step_index) > (${afterAttempt!}, ${afterStep!})
            ORDER BY attempt, step_index
            LIMIT ${page.limit + 1}
          ),
          page AS (
            SELECT attempt, step_index, own, ${pageSums(sql, sql`attempt, step_index`)} FROM sized
          )
          SELECT d.task_id, d.attempt, d.step_index, d.system_prompt, d.user_prompt, d.tool_name, d.arguments, d.created_at, p.fetched
          FROM page p JOIN planner_decisions d ON d.task_id = ${taskId} AND d.attempt = p.attempt AND d.step_index = p.step_index
          WHERE ${inPage(sql, "p")}
          ORDER BY d.attempt, d.step_index`
        const { kept, nextAfter } = pageOf(rows, page.limit, (row) => `${row.attempt}:${row.step_index}`)
        const decisions = kept.map((row): DecisionRecord => ({
          taskId: row.task_id,
          attempt: row.attempt,
          stepIndex: row.step_index,
          systemPrompt: row.system_prompt,
          userPrompt: row.user_prompt,
          toolName: row.tool_name,
          arguments: row.arguments,
          createdAt: iso(row.created_at)
        }))
        return nextAfter === undefined ? { decisions } : { decisions, nextAfter }
      }, Effect.orDie, traced("DecisionsRepo.list")),

      pruneBatch: Effect.fnUntraced(function*(retentionMs, limit) {
        const cutoff = sql`now() - ${wholeMillis(retentionMs)}::float8 * interval '1 millisecond'`
        // No boundary (fewer than `limit` rows left): the batch is all of them. The row count comes
        // from the command tag: no RETURNING rows to materialize and count.
        const result = yield* sql`
          WITH sweep AS (SELECT pg_try_advisory_xact_lock(${PRUNE_LOCK}) AS ours),
          boundary AS (
            SELECT task_terminal_at, id FROM planner_decisions
            WHERE task_terminal_at IS NOT NULL AND task_terminal_at < ${cutoff} AND (SELECT ours FROM sweep)
            ORDER BY task_terminal_at, id
            OFFSET ${limit - 1} LIMIT 1
          )
          DELETE FROM planner_decisions
          WHERE task_terminal_at IS NOT NULL AND task_terminal_at < ${cutoff} AND (SELECT ours FROM sweep)
            AND (NOT EXISTS (SELECT 1 FROM boundary)
              OR (task_terminal_at, id) <= (SELECT task_terminal_at, id FROM boundary))`.raw
        return (result as { readonly rowCount?: number }).rowCount ?? 0
      }, Effect.orDie, traced("DecisionsRepo.pruneBatch"))
    })
  }))
}
