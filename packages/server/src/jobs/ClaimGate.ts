/**
 * Whether this process still takes new job work: the first step of a
 * graceful shutdown closes it, before anything held is given back.
 *
 * Every way work enters the process passes it: the runner's and the wake
 * pipeline's claims, and the runner's hand-off of a finished job's wake to
 * this process's wake loop (a claim too). Each holds the gate while it
 * claims and forks what it got, so `close` returns only when nothing is
 * half-claimed: from then on the loops' fibers are all the work there is, and
 * interrupting them gives every job back. Without it a job released at
 * shutdown woke the still-running loop, which claimed it again (another
 * replica then waited for the lease to expire, and each restart counted as a
 * failed run).
 */
import { Effect, Ref, Semaphore } from "effect"

export interface ClaimGate {
  /**
   * Runs `f` uninterruptibly while holding the gate: `open` is false once it
   * is closed (claim nothing then). A claim statement interrupted mid-flight
   * could commit rows nobody would run or release, hence uninterruptible.
   */
  readonly hold: <A, E, R>(f: (open: boolean) => Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Closes it for good and waits until nothing holds it (idempotent). */
  readonly close: Effect.Effect<void>
}

/** More than could ever hold it at once: `close` takes them all. */
const permits = 1_000_000

export const makeClaimGate: Effect.Effect<ClaimGate> = Effect.gen(function*() {
  const closed = yield* Ref.make(false)
  const semaphore = yield* Semaphore.make(permits)
  return {
    hold: (f) =>
      Effect.uninterruptible(semaphore.withPermits(1)(Ref.get(closed).pipe(Effect.flatMap((c) => f(!c))))),
    close: Ref.set(closed, true).pipe(Effect.andThen(semaphore.withPermits(permits)(Effect.void)))
  }
})
