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

/** Work claimed elsewhere, handed to a running loop: it counts against the loop's concurrency. */
export interface ClaimLoopHandle<A> {
  /** Takes a free slot; false when the loop is full. */
  readonly reserve: Effect.Effect<boolean>
  /** Gives a reserved slot back unused. */
  readonly unreserve: Effect.Effect<void>
  /** Handles `claimed` in a reserved slot, in its own fiber of the loop's scope. */
  readonly hand: (claimed: A) => Effect.Effect<void>
}

/** Starts the loop in the current scope (interrupted, with its fibers, when the scope closes). */
export const forkClaimLoop = <A>(options: ClaimLoopOptions<A>): Effect.Effect<ClaimLoopHandle<A>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { signal: signals } = options
    const active = yield* Ref.make(0)
    const scope = yield* Effect.scope
    // A freed slot matters only to a loop that was full (it stopped claiming); otherwise the
    // loop already waits for the next signal, and waking it would be one more empty claim.
    const freed = Ref.getAndUpdate(active, (n) => n - 1).pipe(
      Effect.flatMap((before) => before >= options.concurrency ? signals.local : Effect.void)
    )
    const handle = (claimed: A) => options.handle(claimed).pipe(Effect.ensuring(freed))
    const loop = Effect.gen(function*() {
      while (true) {
        // Taken before looking, so a signal that arrives meanwhile is not lost.
        const signal = yield* signals.next
        // The free slots are held while claiming (a hand-off meanwhile finds the loop full) and
        // those the claim did not fill given back after.
        const free = yield* Ref.modify(active, (n) => [Math.max(0, options.concurrency - n), Math.max(n, options.concurrency)])
        const claimed = free > 0
          ? yield* options.claim(free).pipe(Effect.onError(() => Ref.update(active, (n) => n - free)))
          : []
        yield* Ref.update(active, (n) => n - (free - claimed.length))
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
    return {
      reserve: Ref.modify(active, (n) => n < options.concurrency ? [true, n + 1] : [false, n]),
      unreserve: freed,
      // Interruptible whatever the caller's region (a hand-off is made uninterruptibly).
      hand: (claimed) => Effect.forkIn(Effect.interruptible(handle(claimed)), scope).pipe(Effect.asVoid)
    }
  })
