/**
 * Jobs in SQL: their records, the runner's claims and leases, the per-chat
 * wake queue. Everything two replicas must agree on is here, in single
 * statements (claims use `FOR UPDATE SKIP LOCKED`, so two claimers never get
 * the same row and never wait for each other); no transaction is held across
 * a sub-agent run or a provider call.
 *
 * Phases (migration 0003): `run` → `wake` → `settled`. A lease is held by the
 * runner in `run` and by the wake in `wake`; an expired one is re-entered.
 *
 * The chat's tables are chat's: these statements read the in-flight marker
 * through `turnInFlight` (and never write it), a chat's life, agent and
 * transcript through `chatGeneration`, `chatAgent` and `transcriptRows`
 * (`chat/TranscriptSql.ts`). What a chat turn writes of jobs (a round's new
 * jobs, the wakes a turn's end makes due) are fragments of chat's own
 * statements (`jobsCreated`, `turnEnd`, through the server tools' port).
 *
 * A job's kind is checked here against the registry (`JobKinds.ts`), not by
 * the database (migration 0007): a job is recorded only of a registered kind,
 * and a stored job of a kind this server does not know (a newer replica's)
 * is never claimed nor listed by it.
 */
import type { JobRecord, JobStatus, SubagentResult } from "@switchboard/domain"
import { BUILT_IN_AGENT, ChatMessage, JOBS_PAGE_MAX, traced } from "@switchboard/domain"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { Statement } from "effect/sql"
import { EmbeddedDatabase } from "../db/EmbeddedDatabase.ts"
import { inPage, pageOf, pageSums } from "../db/SizedPages.ts"
import type { ToolWrites } from "../chat/ServerTools.ts"
import { chatAgent, chatGeneration, transcriptRows, turnInFlight } from "../chat/TranscriptSql.ts"
import { startActivity } from "./JobActivity.ts"
import { isRegisteredKind, kindNames } from "./JobKinds.ts"
import type { ClaimedJob, ClaimedWake, JobRow, NewJob, RecordRow, Settle, WakeDeferral, WakeRow } from "./JobRows.ts"
import { toClaimed, toRecord } from "./JobRows.ts"
import type { ChatKey } from "../users/ChatKey.ts"

export type { ClaimedJob, ClaimedWake, NewJob, Settle, WakeDeferral } from "./JobRows.ts"

/** The channel of every job notification (a job to run, a wake to fire). */
export const jobsChannel = "switchboard_jobs"

/** SQL for one of chat's statements (see `ToolWrites`); the statement's row tells `wakesDue`. */
export type JobsFragments = Pick<ToolWrites, "ctes" | "columns">

/** The column of `turnEnd`'s fragments: whether the turn's end made some of the chat's wakes due. */
export const wakesDueColumn = "jobs_wakes_due"

/** Which page of a chat's jobs (`JobsRepo.list`). */
export interface JobsPage {
  readonly results?: boolean
  readonly limit?: number | undefined
  readonly after?: string | undefined
  /** Only these jobs (those the chat has). */
  readonly ids?: ReadonlyArray<string> | undefined
}

export class JobsRepo extends Context.Service<JobsRepo, {
  /**
   * Records new jobs (phase `run`), in the chat statement that stores the calls' acks: each
   * written only when that statement's condition holds; every replica notified when there are
   * some. Dies on a kind the registry does not have.
   */
  jobsCreated(jobs: ReadonlyArray<NewJob>): JobsFragments
  /**
   * What a turn of the chat writes at its end, in the statement that releases its marker: the
   * chat's deferred wakes are due now (every replica notified when there are some, and
   * `wakesDueColumn` says so). With `settle`, a wake turn's job is settled by that statement too
   * (see `settle`).
   */
  turnEnd(chatId: ChatKey, settle: Settle | undefined): JobsFragments
  /**
   * A page of a chat's jobs, oldest first: at most `limit` (default {@link JOBS_PAGE_MAX}) after
   * `after` (a page's `nextAfter`), ending before its results pass `PAGE_BYTES` (db/SizedPages.ts) (one job at
   * least); `nextAfter` when more follow. `results: false` reads none of their results.
   */
  list(chatId: ChatKey, options?: JobsPage): Effect.Effect<{ readonly jobs: ReadonlyArray<JobRecord>; readonly nextAfter?: string }>
  /** Claims up to `limit` jobs to run: unleased, or leased by a holder whose lease expired. */
  claimRun(owner: string, limit: number, leaseMs: number): Effect.Effect<ReadonlyArray<ClaimedJob>>
  /** Extends a lease; false when it is no longer `owner`'s (expired and taken over). */
  renew(id: string, owner: string, leaseMs: number): Effect.Effect<boolean>
  reportActivity(id: string, owner: string, line: string): Effect.Effect<void>
  /**
   * Stores the result with the job's final `activity` line and queues the wake (`run` → `wake`,
   * every replica notified); `finished` false when the lease was lost. With `wake`, the same
   * statement claims the wake for `wake.owner` when `claimWake` could (no live turn holds the
   * chat, no earlier wake queued in it), and returns it (nobody is notified then).
   */
  finishRun(
    id: string,
    owner: string,
    result: SubagentResult,
    error: string | undefined,
    activity: string,
    wake?: { readonly owner: string; readonly leaseMs: number }
  ): Effect.Effect<{ readonly finished: boolean; readonly wake: ClaimedWake | undefined }>
  /**
   * Gives the lease up at once (a graceful shutdown), so another replica need not wait for it to
   * expire: every replica is notified (the topic of the job's phase) by the same statement. A run
   * given back this way is not counted (`run_attempts`, which ends a job past `maxRuns`, counts the
   * runs that died: a crash leaves its lease to expire and keeps the count).
   */
  release(id: string, owner: string): Effect.Effect<void>
  /**
   * Claims the heads of chats' wake queues: at most one job per chat, the earliest finished, of
   * chats no turn holds (the end of that turn makes them due and notifies), each with its chat's
   * transcript, read by the same statement (one row per message): the wake's look before it takes
   * the marker.
   */
  claimWake(owner: string, limit: number, leaseMs: number): Effect.Effect<ReadonlyArray<ClaimedWake>>
  /** Puts a wake back in its queue for `delayMs` (see `WakeDeferral`). */
  deferWake(id: string, owner: string, delayMs: number, reason: WakeDeferral): Effect.Effect<void>
  /** `wake` → `settled` with its public status; meant to run in the wake turn's final transaction. */
  settle(id: string, status: Exclude<JobStatus, "running">): Effect.Effect<void>
  /** `pg_notify` on the jobs channel (delivered to listeners when the current transaction commits). */
  notify(topic: "run" | "wake"): Effect.Effect<void>
}>()("switchboard/server/jobs/JobsRepo") {
  static readonly layer = Layer.effect(JobsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ms = (n: number) => sql`${Math.max(0, Math.round(n))} * interval '1 millisecond'`
    // The embedded database has no listener (one process, see JobSignals): its statements skip the
    // pg_notify; payloads are the topic of the loop that is to look.
    const shared = !(yield* EmbeddedDatabase)
    const decodeTranscript = Schema.decodeUnknownEffect(Schema.Array(ChatMessage))

    /**
     * Claimed wakes from rows of a statement that returns each job (`job`, its row as JSON) followed
     * by its chat's messages, one per row: never a whole transcript in one row, which could outgrow
     * what the driver reads in one (16 MiB) though every message fits in a row of its own.
     */
    const wakesOf = <Extra extends object>(rows: ReadonlyArray<WakeRow<Extra>>) =>
      Effect.gen(function*() {
        const groups: Array<{ job: JobRow & Extra; messages: Array<unknown> }> = []
        for (const row of rows) {
          if (row.job !== null) groups.push({ job: row.job, messages: [] })
          else groups.at(-1)?.messages.push(row.message)
        }
        const wakes: Array<{ readonly job: JobRow & Extra; readonly wake: ClaimedWake }> = []
        for (const { job, messages } of groups) {
          // Always read: the claiming statement takes it from the job's chat row, which the job references.
          const wake = {
            ...toClaimed(job),
            generation: job.chat_generation ?? "",
            agent: job.chat_agent ?? BUILT_IN_AGENT,
            ...(job.finished_at === null ? {} : { finishedAt: new Date(job.finished_at).getTime() }),
            transcript: yield* decodeTranscript(messages)
          }
          wakes.push({ job, wake })
        }
        return wakes
      })
    const jobRows = (jobs: ReadonlyArray<NewJob>) =>
      JSON.stringify(jobs.map((j) => {
        if (!isRegisteredKind(j.kind) && j.definition === undefined) {
          throw new Error(`job ${j.id}: no job kind ${JSON.stringify(j.kind)} is registered`)
        }
        return {
        id: j.id,
        chat_id: j.chatId,
        kind: j.kind,
        tool_call_id: j.toolCallId,
        input: j.input,
        context: j.context ?? null,
        // As text inside the row's JSON: the column is text (migration 0016), which keeps the key order.
        definition: j.definition === undefined ? null : JSON.stringify(j.definition),
        // Never empty: what the job is to do, until its run says more (JobActivity.ts).
        activity: startActivity(j.kind, j.input)
      }
      }))
    // Claims and lists take only the registered kinds and the defined ones (a job of a defined kind carries its
    // definition): a kind this server cannot run or show is left alone.
    const known = (alias: string) =>
      sql`(${sql(alias)}.kind IN ${sql.in(kindNames)} OR ${sql(alias)}.definition IS NOT NULL)`
    const held = (chatId: Statement.Fragment) => turnInFlight(sql, chatId)

    return JobsRepo.of({
      jobsCreated: (jobs) => {
        if (jobs.length === 0) return { ctes: () => [], columns: [] }
        const rows = jobRows(jobs)
        return {
          ctes: (when) => [sql`jobs_created AS (
            INSERT INTO jobs (id, chat_id, kind, tool_call_id, input, context, definition, activity)
            SELECT r->>'id', r->>'chat_id', r->>'kind', r->>'tool_call_id', r->'input', NULLIF(r->'context', 'null'::jsonb),
              r->>'definition', r->>'activity'
            FROM jsonb_array_elements(${rows}::jsonb) WITH ORDINALITY AS t(r, n)
            WHERE ${when}
            ORDER BY t.n
          )`],
          columns: shared ? [sql`pg_notify(${jobsChannel}, 'run') AS jobs_run_notified`] : []
        }
      },

      turnEnd: (chatId, settle) => ({
        // The settled job is left out of `due`: one statement must not update a row twice.
        ctes: () => [
          ...(settle === undefined ? [] : [sql`jobs_settled AS (
            UPDATE jobs SET phase = 'settled', status = ${settle.status}, lease_owner = NULL, lease_expires_at = NULL,
              updated_at = now()
            WHERE id = ${settle.jobId} AND phase = 'wake'
          )`]),
          sql`jobs_due AS (
            UPDATE jobs SET wake_after = LEAST(wake_after, now())
            WHERE chat_id = ${chatId} AND phase = 'wake'${settle === undefined ? sql`` : sql` AND id <> ${settle.jobId}`}
            RETURNING id
          )`
        ],
        columns: [
          sql`EXISTS (SELECT 1 FROM jobs_due) AS ${sql(wakesDueColumn)}`,
          ...(shared ? [sql`CASE WHEN EXISTS (SELECT 1 FROM jobs_due) THEN pg_notify(${jobsChannel}, 'wake') END AS jobs_wake_notified`] : [])
        ]
      }),

      list: Effect.fnUntraced(function*(chatId, options) {
        const results = options?.results !== false
        const limit = options?.limit ?? JOBS_PAGE_MAX
        // Without results, their column is not read at all (a demo's page is up to a MiB, stored out of line); a defined
        // kind's definition only for a settled job's, whose result it orders. The page's keys and sizes first,
        // then only the jobs kept read whole (db/SizedPages.ts).
        const rows = yield* sql<RecordRow & { readonly seq: string; readonly fetched: number | string }>`
          WITH sized AS (
            SELECT seq, ${results ? sql`coalesce(octet_length(result::text), 0)` : sql`0`} + coalesce(octet_length(waiting_for::text), 0) + 1 AS own
            FROM jobs WHERE chat_id = ${chatId} AND ${known("jobs")} AND seq > ${options?.after ?? "0"}::int8
              ${options?.ids === undefined ? sql`` : sql`AND id IN ${sql.in(options.ids)}`}
            ORDER BY seq LIMIT ${limit + 1}
          ),
          page AS (SELECT seq, own, ${pageSums(sql, sql`seq`)} FROM sized)
          SELECT j.id, j.kind, j.chat_id, j.tool_call_id, j.status, j.activity, j.created_at, j.updated_at, j.finished_at, j.error,
            j.waiting_for, ${results ? sql`CASE WHEN j.status <> 'running' THEN j.definition END` : sql`NULL::text`} AS definition,
            ${results ? sql`j.result` : sql`NULL::jsonb`} AS result, j.seq::text AS seq, p.fetched
          FROM page p JOIN jobs j ON j.seq = p.seq
          WHERE ${inPage(sql, "p")}
          ORDER BY j.seq`
        const { kept, nextAfter } = pageOf(rows, limit, (row) => row.seq)
        const jobs = kept.map(toRecord)
        return nextAfter === undefined ? { jobs } : { jobs, nextAfter }
      }, Effect.orDie, traced("JobsRepo.list")),

      claimRun: Effect.fnUntraced(function*(owner, limit, leaseMs) {
        if (limit <= 0) return []
        const rows = yield* sql<JobRow>`
          UPDATE jobs SET lease_owner = ${owner}, lease_expires_at = now() + ${ms(leaseMs)},
            run_attempts = run_attempts + 1, updated_at = now()
          WHERE id IN (
            SELECT id FROM jobs
            WHERE phase = 'run' AND (lease_expires_at IS NULL OR lease_expires_at < now()) AND ${known("jobs")}
              AND (waiting_for IS NULL OR parked_until <= now())
            ORDER BY seq LIMIT ${limit}
            FOR UPDATE SKIP LOCKED)
          RETURNING *`
        return rows.map(toClaimed)
      }, Effect.orDie, traced("JobsRepo.claimRun")),

      renew: Effect.fnUntraced(function*(id, owner, leaseMs) {
        const rows = yield* sql`
          UPDATE jobs SET lease_expires_at = now() + ${ms(leaseMs)}
          WHERE id = ${id} AND lease_owner = ${owner} AND phase <> 'settled'
          RETURNING id`
        return rows.length === 1
      }, Effect.orDie, traced("JobsRepo.renew")),

      reportActivity: Effect.fnUntraced(function*(id, owner, line) {
        yield* sql`
          UPDATE jobs SET activity = ${line}, updated_at = now()
          WHERE id = ${id} AND lease_owner = ${owner} AND phase = 'run'`
      }, Effect.orDie, traced("JobsRepo.reportActivity")),

      finishRun: Effect.fnUntraced(function*(id, owner, result, error, activity, wake) {
        if (wake === undefined) {
          const rows = yield* sql`
            UPDATE jobs SET phase = 'wake', result = ${JSON.stringify(result)}::jsonb, error = ${error ?? null},
              activity = ${activity}, finished_at = clock_timestamp(), wake_after = now(), lease_owner = NULL, lease_expires_at = NULL,
              updated_at = now()
            WHERE id = ${id} AND lease_owner = ${owner} AND phase = 'run'
            RETURNING id${shared ? sql`, pg_notify(${jobsChannel}, 'wake')` : sql``}`
          return { finished: rows.length === 1, wake: undefined }
        }
        // The job finishes now, so it heads its chat's queue unless a wake is queued there already.
        const rows = yield* sql<WakeRow<{ readonly taken: boolean }>>`
          WITH free AS (
            SELECT NOT ${held(sql`j.chat_id`)}
              AND NOT EXISTS (SELECT 1 FROM jobs o WHERE o.chat_id = j.chat_id AND o.phase = 'wake') AS taken
            FROM jobs j WHERE j.id = ${id}
          ),
          done AS (
            UPDATE jobs SET phase = 'wake', result = ${JSON.stringify(result)}::jsonb, error = ${error ?? null},
              activity = ${activity}, finished_at = clock_timestamp(), wake_after = now(),
              lease_owner = CASE WHEN free.taken THEN ${wake.owner} END,
              lease_expires_at = CASE WHEN free.taken THEN now() + ${ms(wake.leaseMs)} END,
              wake_attempts = wake_attempts + CASE WHEN free.taken THEN 1 ELSE 0 END,
              updated_at = now()
            FROM free
            WHERE jobs.id = ${id} AND jobs.lease_owner = ${owner} AND jobs.phase = 'run'
            RETURNING jobs.*, free.taken${
          shared ? sql`, CASE WHEN free.taken THEN NULL ELSE pg_notify(${jobsChannel}, 'wake') END AS notified` : sql``}
          )
          SELECT to_jsonb(d) || jsonb_build_object(
            'chat_generation', ${chatGeneration(sql, sql`d.chat_id`)},
            'chat_agent', ${chatAgent(sql, sql`d.chat_id`)}) AS job,
            NULL::jsonb AS message, 0::bigint AS seq
          FROM done d
          UNION ALL
          SELECT NULL, m.message, m.seq FROM done d JOIN ${transcriptRows(sql)} m ON d.taken AND m.chat_id = d.chat_id
          ORDER BY seq`
        const [claimed] = yield* wakesOf(rows)
        if (claimed === undefined) return { finished: false, wake: undefined }
        if (!claimed.job.taken) return { finished: true, wake: undefined }
        return { finished: true, wake: claimed.wake }
      }, Effect.orDie, traced("JobsRepo.finishRun")),

      release: Effect.fnUntraced(function*(id, owner) {
        // The owner check makes the give-back exact: it undoes the claim that took this lease, and
        // a lease that expired and was taken over is left alone.
        yield* sql`
          UPDATE jobs SET lease_owner = NULL, lease_expires_at = NULL,
            run_attempts = GREATEST(0, run_attempts - CASE WHEN phase = 'run' THEN 1 ELSE 0 END), updated_at = now()
          WHERE id = ${id} AND lease_owner = ${owner} AND phase <> 'settled'
          RETURNING id${shared ? sql`, pg_notify(${jobsChannel}, CASE WHEN phase = 'run' THEN 'run' ELSE 'wake' END)` : sql``}`
      }, Effect.orDie, traced("JobsRepo.release")),

      claimWake: Effect.fnUntraced(function*(owner, limit, leaseMs) {
        if (limit <= 0) return []
        // Only the head of each chat's queue is eligible, and only while no one holds it:
        // one wake per chat at a time, in completion order; chats never wait for each other.
        const rows = yield* sql<WakeRow>`
          WITH claimed AS (
            UPDATE jobs SET lease_owner = ${owner}, lease_expires_at = now() + ${ms(leaseMs)},
            wake_attempts = wake_attempts + 1, updated_at = now()
          WHERE id IN (
            SELECT j.id FROM jobs j
            WHERE j.phase = 'wake' AND (j.lease_expires_at IS NULL OR j.lease_expires_at < now())
              AND j.wake_after <= now() AND ${known("j")}
              AND NOT ${held(sql`j.chat_id`)}
              AND NOT EXISTS (
                SELECT 1 FROM jobs o
                WHERE o.chat_id = j.chat_id AND o.phase = 'wake' AND (o.finished_at, o.seq) < (j.finished_at, j.seq))
            ORDER BY j.finished_at, j.seq LIMIT ${limit}
            FOR UPDATE OF j SKIP LOCKED)
            RETURNING *
          )
          SELECT to_jsonb(c) || jsonb_build_object(
            'chat_generation', ${chatGeneration(sql, sql`c.chat_id`)},
            'chat_agent', ${chatAgent(sql, sql`c.chat_id`)}) AS job,
            NULL::jsonb AS message, c.finished_at, c.seq AS job_seq, 0::bigint AS seq
          FROM claimed c
          UNION ALL
          SELECT NULL, m.message, c.finished_at, c.seq, m.seq FROM claimed c JOIN ${transcriptRows(sql)} m ON m.chat_id = c.chat_id
          ORDER BY finished_at, job_seq, seq`
        return (yield* wakesOf(rows)).map((claimed) => claimed.wake)
      }, Effect.orDie, traced("JobsRepo.claimWake")),

      deferWake: Effect.fnUntraced(function*(id, owner, delayMs, reason) {
        const due = reason === "busy"
          ? sql`CASE WHEN ${held(sql`jobs.chat_id`)} THEN now() + ${ms(delayMs)} ELSE now() END`
          : sql`now() + ${ms(delayMs)}`
        yield* sql`
          UPDATE jobs SET lease_owner = NULL, lease_expires_at = NULL, wake_after = ${due}, updated_at = now(),
            wake_failures = wake_failures + ${reason === "failed" ? 1 : 0}
          WHERE id = ${id} AND lease_owner = ${owner} AND phase = 'wake'`
      }, Effect.orDie, traced("JobsRepo.deferWake")),

      settle: Effect.fnUntraced(function*(id, status) {
        // No owner check: the chat's marker, held by the wake turn calling this, is what makes it exclusive.
        yield* sql`
          UPDATE jobs SET phase = 'settled', status = ${status}, lease_owner = NULL, lease_expires_at = NULL,
            updated_at = now()
          WHERE id = ${id} AND phase = 'wake'`
      }, Effect.orDie, traced("JobsRepo.settle")),

      notify: (topic) => sql`SELECT pg_notify(${jobsChannel}, ${topic})`.pipe(Effect.asVoid, Effect.orDie)
    })
  }))
}
