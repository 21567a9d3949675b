/**
 * How many times a task is tried, and what any end of a task writes beside it (`stampDecisions`).
 *
 * A task whose host vanishes goes back to the queue as `attempt + 1` (its lease ran out, or its
 * host was revoked); a task that kills every host that takes it would go round for ever, each
 * attempt a fresh `PLANNER_MAX_STEPS` of decisions. After
 * `TASK_MAX_ATTEMPTS` attempts (default 10) it is not handed out again: it ends `failed`, its
 * output saying why, and its decisions start their retention window.
 *
 * A lease that ran out on the last attempt makes the task `failed` at once for every read and
 * claim (they compute it, as they compute a lapsed task's `queued`); the planner's periodic sweep
 * then writes it down and stamps its decisions (`TasksRepo.settleExhausted`).
 */
import type { SqlClient } from "effect/sql"
import { POSITIVE } from "../process/Accepts.ts"
import { wholeNumberSetting } from "../process/Setting.ts"

export const DEFAULT_MAX_ATTEMPTS = 10

export const TaskMaxAttemptsSetting = wholeNumberSetting("TASK_MAX_ATTEMPTS", POSITIVE, { min: 1 }, DEFAULT_MAX_ATTEMPTS)

/** The output of a task given up on: its last attempt's `why`. */
export const gaveUp = (maxAttempts: number, why: "lease" | "revoked") =>
  `gave up after ${maxAttempts} attempt${maxAttempts === 1 ? "" : "s"} (TASK_MAX_ATTEMPTS): ` +
  (why === "lease" ? "the last attempt's lease ran out without a result" : "the last attempt's host was revoked")

/**
 * Stamps the decisions of tasks that just ended with their terminal time, for the retention sweep.
 * Its own statement after the tasks' update (in the same transaction), so it sees every decision
 * committed while that update waited for the rows' locks.
 */
export const stampDecisions = (sql: SqlClient.SqlClient, taskIds: ReadonlyArray<string>) => sql`
  UPDATE planner_decisions d SET task_terminal_at = t.terminal_at
  FROM tasks t WHERE t.id = d.task_id AND d.task_id IN ${sql.in(taskIds)}`
