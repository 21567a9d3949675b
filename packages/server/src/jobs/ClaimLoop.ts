/**
 * The loop the runner and the wake pipeline share: claim as much work as
 * there are free slots, handle each claim in its own fiber, then wait for a
 * signal (a notification, a slot freed) or the sweep interval — which is also
 * what re-enters work whose holder died (its lease expired).
 */
import { Deferred, Effect, Ref } from "effect"
import type { Scope } from "effect"
import type { JobSignal } from "./JobSignals.ts"

export interface ClaimLoopOptions<A> {
  readonly name: string
  readonly concurrency: number
  readonly sweepMs: number
  /** This loop's own topic. */
  readonly signal: JobSignal
  readonly claim: (free: number) => Effect.Effect<ReadonlyArray<A>>
  readonly handle: (claimed: A) => Effect.Effect<void>
}

/** Starts the loop in the current scope (interrupted, with its fibers, when the scope closes). */
export const forkClaimLoop = <A>(options: ClaimLoopOptions<A>): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { signal: signals } = options
    const active = yield* Ref.make(0)
    const scope = yield* Effect.scope
    // A freed slot matters only to a loop that was full (it stopped claiming); otherwise the
    // loop already waits for the next signal, and waking it would be one more empty claim.
    const handle = (claimed: A) =>
      options.handle(claimed).pipe(
        Effect.ensuring(
          Ref.getAndUpdate(active, (n) => n - 1).pipe(
            Effect.flatMap((before) => before >= options.concurrency ? signals.local : Effect.void)
          )
        )
      )
    const loop = Effect.gen(function*() {
      while (true) {
        // Taken before looking, so a signal that arrives meanwhile is not lost.
        const signal = yield* signals.next
        const free = options.concurrency - (yield* Ref.get(active))
        const claimed = free > 0 ? yield* options.claim(free) : []
        yield* Ref.update(active, (n) => n + claimed.length)
        for (const item of claimed) yield* Effect.forkIn(handle(item), scope)
        if (claimed.length > 0 && claimed.length === free) continue
        yield* Deferred.await(signal).pipe(Effect.timeoutOption(options.sweepMs))
      }
    }).pipe(
      Effect.catchCause((cause) => Effect.logError(`jobs: ${options.name} loop failed, restarting`, cause)),
      Effect.andThen(Effect.sleep(options.sweepMs)),
      Effect.forever
    )
    yield* Effect.forkScoped(loop)
  })
