/**
 * A command failed in a way already explained to the user. The handler prints
 * the sentence itself; this error only carries the exit code, and is marked
 * as reported so the runtime does not print a stack trace on top of it.
 */
import { Console, Data, Effect, Runtime } from "effect"

export class CliFailure extends Data.TaggedError("CliFailure")<{
  readonly message: string
  readonly exitCode?: number
}> {
  override readonly [Runtime.errorReported] = false
  override get [Runtime.errorExitCode](): number {
    return this.exitCode ?? 1
  }
}

/** Prints `switchboard: <message>` on stderr, then fails with it (exit code 1). */
export const failWith = (message: string): Effect.Effect<never, CliFailure> =>
  Console.error(`switchboard: ${message}`).pipe(Effect.andThen(Effect.fail(new CliFailure({ message }))))
