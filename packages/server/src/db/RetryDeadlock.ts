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

/** Runs `effect` again (up to 4 more times, after 5–40 ms with jitter) when it failed as a deadlock victim. */
export const retryDeadlock = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  effect.pipe(
    Effect.retry({
      while: isDeadlock,
      schedule: Schedule.max([Schedule.jittered(Schedule.exponential("5 millis")), Schedule.recurs(4)])
    })
  )
