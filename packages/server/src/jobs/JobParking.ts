/**
 * Parked jobs (docs/subagents.md, approvals inside a job): a defined kind's
 * sub-agent whose MCP call needs a user's approval saves its conversation and
 * gives its lease back — it holds no lease and no place among the runner's
 * `JOB_CONCURRENCY` while it waits, and the wait does not count against its
 * time limit. The chat's approval route decides it (`decide`: a row of
 * `approval_decisions`, whose primary key makes a second decision a 409 on
 * every replica) and makes it claimable again; any replica's runner resumes
 * it from the saved conversation. Undecided past `APPROVAL_TIMEOUT`, it is
 * claimable too, and its call is denied (`decision`, the same primary key:
 * a decision racing the deadline is one or the other, never both).
 *
 * The approved call runs at most once: `start` marks it started, for the
 * lease holder, before it runs; a run resumed after that (its runner died
 * meanwhile) answers the call as interrupted, never runs it again.
 */
import type { ApprovalDecision, ChatMessage, JobWaitingFor } from "@switchboard/domain"
import { traced } from "@switchboard/domain"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { EmbeddedDatabase } from "../db/EmbeddedDatabase.ts"
import { retryDeadlock } from "../db/RetryDeadlock.ts"
import type { ChatKey } from "../users/ChatKey.ts"
import { jobsChannel } from "./JobsRepo.ts"

/** A parked sub-agent's saved state (`jobs.checkpoint`). */
export const Checkpoint = Schema.Struct({
  /** Its conversation, up to the answer whose call waits (and that round's calls answered before it). */
  messages: Schema.Array(Schema.Unknown),
  /** Provider calls made so far. */
  rounds: Schema.Number,
  approvalId: Schema.String,
  /** The call that waits. */
  callId: Schema.String,
  /** Time the sub-agent worked before it parked (its time limit counts only this). */
  workedMs: Schema.Number,
  /** The approved call was started by a run (never started again). */
  started: Schema.optionalKey(Schema.Boolean)
})
export type Checkpoint = Omit<typeof Checkpoint.Type, "messages"> & { readonly messages: ReadonlyArray<ChatMessage> }

export const decodeCheckpoint = (stored: unknown): Checkpoint | undefined => {
  const decoded = Schema.decodeUnknownOption(Checkpoint)(typeof stored === "string" ? JSON.parse(stored) : stored)
  return decoded._tag === "Some" ? decoded.value as Checkpoint : undefined
}

/** What a decision of a parked job's approval did. */
export type ParkedDecision = "decided" | "decided-already" | "unknown"

export class JobParking extends Context.Service<JobParking, {
  /** Saves the sub-agent's state and gives the lease back; false when the lease was lost (nothing saved). */
  park(
    jobId: string,
    owner: string,
    checkpoint: Checkpoint,
    waitingFor: JobWaitingFor,
    activity: string,
    timeoutMs: number
  ): Effect.Effect<boolean>
  /** Records the user's decision of a job of the chat's that waits on `approvalId`, and makes it claimable. */
  decide(chatId: ChatKey, approvalId: string, decision: ApprovalDecision): Effect.Effect<ParkedDecision>
  /** A resumed job's decision: the recorded one, else (its wait ran out) a denial, recorded now. */
  decision(jobId: string, chatId: ChatKey, checkpoint: Checkpoint, timeoutReason: string): Effect.Effect<ApprovalDecision>
  /** Marks the approved call started, for the lease holder; false when a run started it before (or the lease is lost). */
  start(jobId: string, owner: string): Effect.Effect<boolean>
}>()("switchboard/server/jobs/JobParking") {
  static readonly layer = Layer.effect(JobParking, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const shared = !(yield* EmbeddedDatabase)
    return JobParking.of({
      park: Effect.fnUntraced(function*(jobId, owner, checkpoint, waitingFor, activity, timeoutMs) {
        // The run that parks is not counted among the job's runs: only a runner that dies is.
        const rows = yield* sql`
          UPDATE jobs SET checkpoint = ${JSON.stringify(checkpoint)}::jsonb, waiting_for = ${JSON.stringify(waitingFor)}::jsonb,
            parked_until = now() + ${timeoutMs} * interval '1 millisecond', activity = ${activity},
            lease_owner = NULL, lease_expires_at = NULL, run_attempts = GREATEST(0, run_attempts - 1), updated_at = now()
          WHERE id = ${jobId} AND lease_owner = ${owner} AND phase = 'run'
          RETURNING id`
        return rows.length === 1
      }, Effect.orDie, traced("JobParking.park")),

      decide: Effect.fnUntraced(function*(chatId, approvalId, decision) {
        // A deadlock victim (the chat deleted as it is decided: its cascade meets this statement's
        // locks) is run again, and then finds nothing parked: a 404 rather than a failure.
        const rows = yield* retryDeadlock(sql<{ parked: boolean; recorded: boolean; known: boolean }>`
          WITH parked AS (
            SELECT id, checkpoint->>'callId' AS call_id FROM jobs
            WHERE chat_id = ${chatId} AND phase = 'run' AND waiting_for->>'approvalId' = ${approvalId}
            FOR UPDATE
          ), decided AS (
            INSERT INTO approval_decisions (chat_id, approval_id, tool_call_id, approved, reason, state, owner, lease_until)
            SELECT ${chatId}, ${approvalId}, call_id, ${decision.approved}, ${decision.reason ?? null}, 'done', NULL, now() FROM parked
            ON CONFLICT (chat_id, approval_id) DO NOTHING
            RETURNING approval_id
          ), unparked AS (
            UPDATE jobs SET waiting_for = NULL, parked_until = now(), updated_at = now()
            WHERE id IN (SELECT id FROM parked) AND EXISTS (SELECT 1 FROM decided)
            RETURNING id
          )
          SELECT EXISTS (SELECT 1 FROM parked) AS parked, EXISTS (SELECT 1 FROM unparked) AS recorded,
            EXISTS (SELECT 1 FROM approval_decisions d WHERE d.chat_id = ${chatId} AND d.approval_id = ${approvalId}) AS known
            ${shared ? sql`, CASE WHEN EXISTS (SELECT 1 FROM unparked) THEN pg_notify(${jobsChannel}, 'run') END AS notified` : sql``}`)
        const row = rows[0]
        if (row?.recorded === true) return "decided"
        if (row?.parked === true || row?.known === true) return "decided-already"
        // A decision racing this one locked the job first and unparked it: this statement, which waited
        // on the lock, then finds nothing parked — yet its snapshot, taken before that decision committed,
        // cannot see its row. A statement of its own, begun after, does: a 409, not a 404.
        const later = yield* sql<{ known: boolean }>`
          SELECT EXISTS (SELECT 1 FROM approval_decisions WHERE chat_id = ${chatId} AND approval_id = ${approvalId}) AS known`
        return later[0]?.known === true ? "decided-already" : "unknown"
      }, Effect.orDie, traced("JobParking.decide")),

      decision: Effect.fnUntraced(function*(jobId, chatId, checkpoint, timeoutReason) {
        // The job's row first, then the decision's key — the order `decide` takes them in: taken the other
        // way round, each statement would wait for the other's (a deadlock).
        const rows = yield* retryDeadlock(sql<{ approved: boolean; reason: string | null; n: number }>`
          WITH job AS (
            SELECT id FROM jobs WHERE id = ${jobId} FOR UPDATE
          ), denied AS (
            INSERT INTO approval_decisions (chat_id, approval_id, tool_call_id, approved, reason, state, owner, lease_until)
            SELECT ${chatId}, ${checkpoint.approvalId}, ${checkpoint.callId}, false, ${timeoutReason}, 'done', NULL, now() FROM job
            ON CONFLICT (chat_id, approval_id) DO NOTHING
            RETURNING approved, reason
          ), unparked AS (
            UPDATE jobs SET waiting_for = NULL, updated_at = now() WHERE id IN (SELECT id FROM job) AND waiting_for IS NOT NULL RETURNING id
          )
          SELECT approved, reason, 0 AS n FROM denied
          UNION ALL
          SELECT approved, reason, 1 AS n FROM approval_decisions WHERE chat_id = ${chatId} AND approval_id = ${checkpoint.approvalId}
          ORDER BY n LIMIT 1`)
        // Neither: the user's decision was being recorded as this statement began — it waited for that
        // one on the job's row, its insert then did nothing, and its snapshot predates the decision's row.
        // A statement of its own reads it: the user's decision holds, not a denial nobody recorded.
        const row = rows[0] ?? (yield* sql<{ approved: boolean; reason: string | null }>`
          SELECT approved, reason FROM approval_decisions WHERE chat_id = ${chatId} AND approval_id = ${checkpoint.approvalId}`)[0]
        return row === undefined
          ? { approved: false, reason: timeoutReason }
          : { approved: row.approved, ...(row.reason === null ? {} : { reason: row.reason }) }
      }, Effect.orDie, traced("JobParking.decision")),

      start: Effect.fnUntraced(function*(jobId, owner) {
        const rows = yield* sql`
          UPDATE jobs SET checkpoint = jsonb_set(checkpoint, '{started}', 'true'::jsonb), updated_at = now()
          WHERE id = ${jobId} AND lease_owner = ${owner} AND checkpoint IS NOT NULL
            AND COALESCE((checkpoint->>'started')::boolean, false) = false
          RETURNING id`
        return rows.length === 1
      }, Effect.orDie, traced("JobParking.start"))
    })
  }))
}
