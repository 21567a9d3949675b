/**
 * The task queue, in SQL: PostgreSQL is the coordinator between hosts and
 * between server replicas.
 *
 * - A claim is one statement: the oldest claimable task (queued, or running
 *   with a lease that has passed) is locked with `FOR UPDATE SKIP LOCKED`, so
 *   concurrent claimers each get a different task or none, and never wait for
 *   one another. Reclaiming a task whose lease passed bumps its `attempt` in
 *   that same statement: no sweeper is needed for a lost host's task to go
 *   back to the queue.
 * - Every write of a host (renewal, result, a planner step) names its attempt
 *   and succeeds only while that attempt holds a live lease; otherwise the
 *   caller learns whether the task is unknown (404), not that host's (403) or
 *   no longer its attempt (409 `lease_lost`).
 * - Reads show the queue as a claim would see it: a running task whose lease
 *   passed is `queued`, with the attempt it will be claimed as — or `failed`
 *   when that was its last attempt (`TaskAttempts.ts`).
 * - The operator may cancel a queued or running task: it becomes terminal
 *   (`cancelled`) in one statement, and its host's next write for it is
 *   refused with 409 `task_cancelled`.
 */
import { Forbidden, LeaseLost, TaskCancelled, TaskNotFound, TaskTerminal, traced } from "@switchboard/domain"
import type { ClaimedTask, ResultStatus, TaskStatus, TaskView } from "@switchboard/domain"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { iso, wholeMillis } from "../db/SqlTime.ts"
import { newId } from "./HostsRepo.ts"
import { gaveUp, stampDecisions, TaskMaxAttemptsSetting } from "./TaskAttempts.ts"

/** Exhausted tasks one statement of `settleExhausted` writes down at most. */
const SETTLE_BATCH = 1000

export type TaskRefusal = TaskNotFound | Forbidden | LeaseLost | TaskCancelled

interface ViewRow {
  readonly id: string
  readonly status: TaskStatus
  readonly attempt: number
  readonly host_id: string | null
  readonly goal: string
  readonly created_at: Date
  readonly lease_expires_at: Date | null
  readonly terminal_at: Date | null
  readonly output: unknown
}

const toView = (row: ViewRow): TaskView => ({
  taskId: row.id,
  status: row.status,
  attempt: row.attempt,
  hostId: row.host_id,
  goal: row.goal,
  createdAt: iso(row.created_at),
  ...(row.lease_expires_at !== null ? { leaseExpiresAt: iso(row.lease_expires_at) } : {}),
  ...(row.terminal_at !== null ? { terminalAt: iso(row.terminal_at) } : {}),
  ...(row.terminal_at !== null && row.output !== null ? { output: row.output } : {})
})

export interface TaskFilter {
  readonly status?: TaskStatus | undefined
  readonly hostId?: string | undefined
  readonly limit: number
}

export class TasksRepo extends Context.Service<TasksRepo, {
  /** Queues a task; `undefined` when `reservedFor` names no host (or a revoked one). */
  /** The new task's id; `undefined` when `reservedFor` names no host, "revoked" when it names a revoked one. */
  create(goal: string, reservedFor: string | undefined): Effect.Effect<string | "revoked" | undefined>
  get(taskId: string): Effect.Effect<TaskView, TaskNotFound>
  /** Newest first. */
  list(filter: TaskFilter): Effect.Effect<ReadonlyArray<TaskView>>
  /** The oldest task this host may claim, leased to it for `leaseMs`; `undefined` when none is claimable. */
  claim(hostId: string, leaseMs: number): Effect.Effect<ClaimedTask | undefined>
  /** Extends the live lease of the host's current attempt; answers the new expiry. */
  renew(taskId: string, hostId: string, attempt: number, leaseMs: number): Effect.Effect<string, TaskRefusal>
  /** Succeeds when the host's attempt holds a live lease right now. */
  checkLease(taskId: string, hostId: string, attempt: number): Effect.Effect<void, TaskRefusal>
  /** Ends the attempt: the task becomes terminal; its decisions start their retention window. */
  complete(taskId: string, hostId: string, attempt: number, status: ResultStatus, output: unknown): Effect.Effect<TaskView, TaskRefusal>
  /** A queued or running task becomes terminal, `cancelled`; its decisions start their retention window. */
  cancel(taskId: string): Effect.Effect<TaskView, TaskNotFound | TaskTerminal>
  /**
   * Writes down the tasks whose last attempt's lease ran out (reads show them `failed` already) and
   * stamps their decisions for the retention sweep, a batch at a time; answers how many.
   */
  readonly settleExhausted: Effect.Effect<number>
}>()("switchboard/server/hosts/TasksRepo") {
  static readonly layer = Layer.effect(TasksRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const maxAttempts = yield* TaskMaxAttemptsSetting.config
    const lapsed = sql`(status = 'running' AND lease_expires_at <= now())`
    /** A lapsed task that had its last attempt: failed, never claimed again. */
    const exhausted = sql`(${lapsed} AND attempt >= ${maxAttempts})`
    const lapsedOutput = JSON.stringify(gaveUp(maxAttempts, "lease"))

    // The task as a claim would see it (see the module comment).
    const view = sql`
      SELECT id, goal, created_at, seq,
        CASE WHEN ${exhausted} THEN lease_expires_at ELSE terminal_at END AS terminal_at,
        CASE WHEN ${exhausted} THEN ${lapsedOutput}::jsonb ELSE output END AS output,
        CASE WHEN ${exhausted} THEN 'failed' WHEN ${lapsed} THEN 'queued' ELSE status END AS status,
        CASE WHEN ${lapsed} AND attempt < ${maxAttempts} THEN attempt + 1 ELSE attempt END AS attempt,
        coalesce(host_id, reserved_host_id) AS host_id,
        CASE WHEN status = 'running' AND lease_expires_at > now() THEN lease_expires_at END AS lease_expires_at
      FROM tasks`

    /** Why a write of this host's attempt matched no row. */
    const refusal = (taskId: string, hostId: string, attempt: number) =>
      Effect.gen(function*() {
        const rows = yield* sql<{ holder: string | null; status: string; attempt: number; live: boolean }>`
          SELECT coalesce(host_id, reserved_host_id) AS holder, status, attempt,
            coalesce(lease_expires_at > now(), false) AS live
          FROM tasks WHERE id = ${taskId}`
        const row = rows[0]
        if (row === undefined) return new TaskNotFound({ error: `No task with id "${taskId}"`, taskId })
        if (row.holder !== hostId) return new Forbidden({ error: `Task ${taskId} is not assigned to host ${hostId}` })
        if (row.status === "cancelled") {
          return new TaskCancelled({ error: `Task ${taskId} was cancelled by the operator: stop working on it`, taskId })
        }
        const why = row.status !== "running"
          ? row.status === "queued" ? "the task is not claimed" : `the task is already ${row.status}`
          : row.attempt !== attempt
          ? `attempt ${attempt} is not the current one (${row.attempt})`
          : "the lease expired"
        return new LeaseLost({ error: `Lease lost on task ${taskId}: ${why}`, taskId })
      }).pipe(Effect.orDie)

    return TasksRepo.of({
      create: Effect.fnUntraced(function*(goal, reservedFor) {
        const taskId = newId("task")
        // The host read under a lock (`FOR KEY SHARE`, as the task's foreign key takes it anyway): a
        // revocation in flight holds the row, so this waits for it and reads the row it left — read from
        // the statement's snapshot instead, the task would be reserved for a host revoked meanwhile, after
        // the revocation cleared its reservations, and no host could ever claim it.
        const rows = yield* sql<{ id: string | null; revoked: boolean | null }>`
          WITH host AS (SELECT revoked_at IS NOT NULL AS revoked FROM hosts WHERE id = ${reservedFor ?? null} FOR KEY SHARE),
          created AS (
            INSERT INTO tasks (id, goal, reserved_host_id)
            SELECT ${taskId}, ${goal}, ${reservedFor ?? null}
            WHERE ${reservedFor ?? null}::text IS NULL OR (SELECT NOT revoked FROM host)
            RETURNING id
          )
          SELECT (SELECT id FROM created) AS id, (SELECT revoked FROM host) AS revoked`
        const row = rows[0]
        if (row?.id) return row.id
        return row?.revoked === true ? "revoked" as const : undefined
      }, Effect.orDie, traced("TasksRepo.create")),

      get: Effect.fnUntraced(function*(taskId) {
        const rows = yield* sql<ViewRow>`SELECT * FROM (${view}) t WHERE id = ${taskId}`.pipe(Effect.orDie)
        const row = rows[0]
        if (row === undefined) return yield* new TaskNotFound({ error: `No task with id "${taskId}"`, taskId })
        return toView(row)
      }, traced("TasksRepo.get")),

      list: Effect.fnUntraced(function*(filter) {
        const rows = yield* sql<ViewRow>`
          SELECT * FROM (${view}) t
          WHERE (${filter.status ?? null}::text IS NULL OR status = ${filter.status ?? null})
            AND (${filter.hostId ?? null}::text IS NULL OR host_id = ${filter.hostId ?? null})
          ORDER BY seq DESC
          LIMIT ${filter.limit}`
        return rows.map(toView)
      }, Effect.orDie, traced("TasksRepo.list")),

      claim: Effect.fnUntraced(function*(hostId, leaseMs) {
        // The host's row is locked (shared) for the claim: a revocation, which updates it first,
        // either waits for this claim to commit (and then re-queues its task) or makes it claim nothing.
        const rows = yield* sql<{ id: string; attempt: number; goal: string; lease_expires_at: Date }>`
          WITH host AS (
            SELECT id FROM hosts WHERE id = ${hostId} AND revoked_at IS NULL FOR SHARE
          ),
          candidate AS (
            SELECT id FROM tasks
            WHERE EXISTS (SELECT 1 FROM host)
              AND status IN ('queued', 'running')
              AND (status = 'queued' OR (lease_expires_at <= now() AND attempt < ${maxAttempts}))
              AND (reserved_host_id IS NULL OR reserved_host_id = ${hostId})
            ORDER BY seq
            LIMIT 1
            FOR UPDATE SKIP LOCKED
          )
          UPDATE tasks t SET
            attempt = CASE WHEN t.status = 'running' THEN t.attempt + 1 ELSE t.attempt END,
            status = 'running',
            host_id = ${hostId},
            lease_expires_at = now() + ${wholeMillis(leaseMs)}::float8 * interval '1 millisecond',
            next_step_index = 0
          FROM candidate
          WHERE t.id = candidate.id
          RETURNING t.id, t.attempt, t.goal, t.lease_expires_at`
        const row = rows[0]
        return row === undefined
          ? undefined
          : { taskId: row.id, attempt: row.attempt, goal: row.goal, leaseExpiresAt: iso(row.lease_expires_at) }
      }, Effect.orDie, traced("TasksRepo.claim")),

      renew: Effect.fnUntraced(function*(taskId, hostId, attempt, leaseMs) {
        const rows = yield* sql<{ lease_expires_at: Date }>`
          UPDATE tasks SET lease_expires_at = now() + ${wholeMillis(leaseMs)}::float8 * interval '1 millisecond'
          WHERE id = ${taskId} AND host_id = ${hostId} AND attempt = ${attempt}
            AND status = 'running' AND lease_expires_at > now()
          RETURNING lease_expires_at`.pipe(Effect.orDie)
        const row = rows[0]
        if (row === undefined) return yield* Effect.flip(refusal(taskId, hostId, attempt))
        return iso(row.lease_expires_at)
      }, traced("TasksRepo.renew")),

      checkLease: Effect.fnUntraced(function*(taskId, hostId, attempt) {
        const rows = yield* sql`
          SELECT 1 FROM tasks
          WHERE id = ${taskId} AND host_id = ${hostId} AND attempt = ${attempt}
            AND status = 'running' AND lease_expires_at > now()`.pipe(Effect.orDie)
        if (rows.length === 0) return yield* Effect.flip(refusal(taskId, hostId, attempt))
      }, traced("TasksRepo.checkLease")),

      complete: Effect.fnUntraced(function*(taskId, hostId, attempt, status, output) {
        const ended = yield* sql.withTransaction(Effect.gen(function*() {
          const rows = yield* sql`
            UPDATE tasks SET status = ${status}, output = ${JSON.stringify(output ?? null)}::jsonb,
              terminal_at = now(), lease_expires_at = NULL
            WHERE id = ${taskId} AND host_id = ${hostId} AND attempt = ${attempt}
              AND status = 'running' AND lease_expires_at > now()
            RETURNING id`
          if (rows.length === 0) return false
          yield* stampDecisions(sql, [taskId])
          return true
        })).pipe(Effect.orDie)
        if (!ended) return yield* Effect.flip(refusal(taskId, hostId, attempt))
        const rows = yield* sql<ViewRow>`SELECT * FROM (${view}) t WHERE id = ${taskId}`.pipe(Effect.orDie)
        return toView(rows[0]!)
      }, traced("TasksRepo.complete")),

      cancel: Effect.fnUntraced(function*(taskId) {
        const cancelled = yield* sql.withTransaction(Effect.gen(function*() {
          const rows = yield* sql`
            UPDATE tasks SET status = 'cancelled', terminal_at = now(), lease_expires_at = NULL
            WHERE id = ${taskId} AND status IN ('queued', 'running') AND NOT ${exhausted}
            RETURNING id`
          if (rows.length === 0) return false
          yield* stampDecisions(sql, [taskId])
          return true
        })).pipe(Effect.orDie)
        const rows = yield* sql<ViewRow>`SELECT * FROM (${view}) t WHERE id = ${taskId}`.pipe(Effect.orDie)
        const row = rows[0]
        if (row === undefined) return yield* new TaskNotFound({ error: `No task with id "${taskId}"`, taskId })
        if (!cancelled) {
          return yield* new TaskTerminal({
            error: `Task ${taskId} has already ended (${row.status}): there is nothing to cancel`,
            taskId,
            status: row.status
          })
        }
        return toView(row)
      }, traced("TasksRepo.cancel")),

      settleExhausted: Effect.gen(function*() {
        let total = 0
        while (true) {
          // Two statements in one short transaction, as a cancel's: the decisions stamped are read
          // after the tasks' update, so none committed meanwhile is missed.
          const settled = yield* sql.withTransaction(Effect.gen(function*() {
            const rows = yield* sql<{ id: string }>`
              UPDATE tasks SET status = 'failed', terminal_at = lease_expires_at, output = ${lapsedOutput}::jsonb,
                lease_expires_at = NULL
              WHERE id IN (
                SELECT id FROM tasks WHERE ${exhausted} ORDER BY seq LIMIT ${SETTLE_BATCH} FOR UPDATE SKIP LOCKED
              )
              RETURNING id`
            if (rows.length > 0) yield* stampDecisions(sql, rows.map((r) => r.id))
            return rows.length
          }))
          total += settled
          if (settled < SETTLE_BATCH) return total
        }
      }).pipe(Effect.orDie, Effect.withSpan("TasksRepo.settleExhausted"))
    })
  }))
}
