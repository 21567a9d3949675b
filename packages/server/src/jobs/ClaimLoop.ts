/**
 * The loop the runner and the wake pipeline share: claim as much work as
 * there are free slots, handle each claim in its own fiber, then wait for a
 * signal (a notification, a slot freed) or the sweep interval — which is also
 * what re-enters work whose holder died (its lease expired).
 *
 * Shutdown (the loop's scope closing) stops taking work first, then gives
 * back what it holds: the process's claim gate is closed (no claim of either
 * loop, no hand-off, is left half done), and only then are the handlers
 * interrupted, each releasing its claim (see `ClaimGate`).
 */
import { Deferred, Effect, FiberSet, Ref } from "effect"
import type { Scope } from "effect"
import type { ClaimGate } from "./ClaimGate.ts"
import type { JobSignal } from "./JobSignals.ts"

export interface ClaimLoopOptions<A> {
  readonly name: string
  readonly concurrency: number
  readonly sweepMs: number
  /** This loop's own topic. */
  readonly signal: JobSignal
  /** The process's claim gate, shared by every loop: closed first at shutdown. */
  readonly gate: ClaimGate
  readonly claim: (free: number) => Effect.Effect<ReadonlyArray<A>>
  /** Handles one claim; interrupted at shutdown, when it gives the claim back. */
  readonly handle: (claimed: A) => Effect.Effect<void>
}

/** Work claimed elsewhere, handed to a running loop: it counts against the loop's concurrency. */
export interface ClaimLoopHandle<A> {
  /** Takes a free slot; false when the loop is full. */
  readonly reserve: Effect.Effect<boolean>
  /** Gives a reserved slot back unused. */
  readonly unreserve: Effect.Effect<void>
  /**
   * Handles `claimed` in a reserved slot, in its own fiber of the loop. Only while holding the
   * gate open: a hand-off after the gate closed would find the handlers already given back.
   */
  readonly hand: (claimed: A) => Effect.Effect<void>
}

/** Starts the loop in the current scope (stopped as above when the scope closes). */
export const forkClaimLoop = <A>(options: ClaimLoopOptions<A>): Effect.Effect<ClaimLoopHandle<A>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { gate, signal: signals } = options
    const active = yield* Ref.make(0)
    // Made first, so that the scope's own interruption of what is left comes last (finalizers run in
    // reverse): by then the shutdown below has interrupted every handler, after closing the gate.
    const handlers = yield* FiberSet.make<void, never>()
    // A freed slot matters only to a loop that was full (it stopped claiming); otherwise the
    // loop already waits for the next signal, and waking it would be one more empty claim.
    const freed = Ref.getAndUpdate(active, (n) => n - 1).pipe(
      Effect.flatMap((before) => before >= options.concurrency ? signals.local : Effect.void)
    )
    // Started at once (FiberSet.run's default), so the handler's release-on-interrupt is in place
    // before anything can interrupt it: a fiber interrupted before it starts runs nothing.
    const run = (claimed: A) => FiberSet.run(handlers, options.handle(claimed).pipe(Effect.ensuring(freed)))
    const loop = Effect.gen(function*() {
      while (true) {
        // Taken before looking, so a signal that arrives meanwhile is not lost.
        const signal = yield* signals.next
        const { claimed, free } = yield* gate.hold((open) =>
          Effect.gen(function*() {
            if (!open) return { claimed: [] as ReadonlyArray<A>, free: 0 }
            // The free slots are held while claiming (a hand-off meanwhile finds the loop full) and
            // those the claim did not fill given back after.
            const free = yield* Ref.modify(active, (n) => [Math.max(0, options.concurrency - n), Math.max(n, options.concurrency)])
            const claimed = free > 0
              ? yield* options.claim(free).pipe(Effect.onError(() => Ref.update(active, (n) => n - free)))
              : []
            yield* Ref.update(active, (n) => n - (free - claimed.length))
            for (const item of claimed) yield* run(item)
            return { claimed, free }
          })
        )
        if (claimed.length > 0 && claimed.length === free) continue
        yield* Deferred.await(signal).pipe(Effect.timeoutOption(options.sweepMs))
      }
    }).pipe(
      Effect.catchCause((cause) => Effect.logError(`jobs: ${options.name} loop failed, restarting`, cause)),
      Effect.andThen(Effect.sleep(options.sweepMs)),
      Effect.forever
    )
    yield* Effect.forkScoped(loop)
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        yield* gate.close
        const held = yield* FiberSet.size(handlers)
        yield* FiberSet.clear(handlers)
        // The operator's record of a graceful stop: what this replica handed over.
        if (held > 0) yield* Effect.logInfo(`jobs: ${options.name} stopped, ${held} held ${held === 1 ? "job" : "jobs"} given back`)
      })
    )
    return {
      reserve: Ref.modify(active, (n) => n < options.concurrency ? [true, n + 1] : [false, n]),
      unreserve: freed,
      hand: (claimed) => Effect.asVoid(run(claimed))
    }
  })
