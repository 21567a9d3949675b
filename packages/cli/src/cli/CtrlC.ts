/**
 * Ctrl+C while a turn runs: the first press stops the turn (the server keeps
 * what the model had said, and the CLI prints it), a second one quits, as
 * Ctrl+C always does.
 *
 * Node hands SIGINT to every listener, and the runtime's (runMain's) ends the
 * program. While the turn runs, those listeners are set aside and ours takes
 * the signal; on the second press, or when the turn ends, they are put back,
 * and the second press is sent to them again.
 */
import { Deferred, Effect } from "effect"

type Listener = (...args: Array<unknown>) => void

export const firstCtrlCStops = <A, E, R, R2>(
  effect: Effect.Effect<A, E, R>,
  stop: Effect.Effect<void, never, R2>
): Effect.Effect<A, E, R | R2> =>
  Effect.scoped(Effect.gen(function*() {
    const pressed = yield* Deferred.make<void>()
    let presses = 0
    let displaced: Array<Listener> = []
    const restore = () => {
      process.removeListener("SIGINT", listener)
      for (const other of displaced) process.on("SIGINT", other)
      displaced = []
    }
    const listener = () => {
      if (++presses === 1) return Deferred.doneUnsafe(pressed, Effect.void)
      restore()
      process.kill(process.pid, "SIGINT")
    }
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        displaced = process.rawListeners("SIGINT") as Array<Listener>
        for (const other of displaced) process.removeListener("SIGINT", other)
        process.on("SIGINT", listener)
      }),
      () => Effect.sync(restore)
    )
    yield* Effect.forkScoped(Effect.andThen(Deferred.await(pressed), stop))
    return yield* effect
  }))
