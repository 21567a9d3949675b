/**
 * A statement PostgreSQL picked as a deadlock victim was rolled back whole and
 * can simply be run again. Under concurrent turns and wake turns of one chat
 * (the marker's upsert, the wake's settle-and-release transaction, the
 * release's wake-due update) the server sees the occasional deadlock; without
 * a retry the client got a 503 for a request that was fine. Only single
 * statements or whole transactions are retried: never half of one.
 */
import { Effect, Schedule } from "effect"

const isDeadlock = (error: unknown): boolean =>
  typeof error === "object" && error !== null && (error as { _tag?: unknown })._tag === "SqlError" &&
  (error as { reason?: { _tag?: unknown } }).reason?._tag === "DeadlockError"

// After the second run, at most 3 more, each waiting 5–40 ms with jitter on top of its own 5 ms.
const thenRetries = Schedule.max([Schedule.jittered(Schedule.exponential("5 millis")), Schedule.recurs(3)])

/**
 * Runs `effect` again (up to 4 more times: after 5 ms, then after 10–45 ms with jitter) when it failed
 * as a deadlock victim. The retry is set up only after a deadlock: every statement of a turn goes through
 * here, and a retry's schedule made up front for each one was a cost on the path that never needs it.
 */
export const retryDeadlock = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  effect.pipe(
    Effect.catchIf(isDeadlock, () =>
      Effect.retry(Effect.delay(effect, "5 millis"), { while: isDeadlock, schedule: thenRetries }))
  )
