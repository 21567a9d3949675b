/**
 * Why the server did not start, in one line an operator can act on: the
 * settings checked before anything starts (`Settings.ts`), then whatever a
 * start that got further fails with — Effect's `ConfigError` (whose own
 * rendering is a `SchemaError` with a path and a stack), the listening
 * socket's `ServeError` (whose message is empty: the address in use is in
 * its cause), and the checks that refuse a combination of settings
 * (`InvalidSetting`). Anything else is not a configuration problem and
 * keeps Effect's full report.
 */
import { Cause, Data, Effect, Runtime } from "effect"
import { refusal } from "../process/InvalidSetting.ts"
import type { Env } from "../process/SettingRule.ts"
import { configErrorLine, invalidSettings } from "./Settings.ts"

/** A setting, or a combination of them, that the server refuses; `message` is the line to print. */
export class InvalidSetting extends Data.TaggedError("InvalidSetting")<{ readonly message: string }> {}

/** The start was refused and said so on stderr: the runtime must not report it again (nor a stack). */
export class StartupRefused extends Data.TaggedError("StartupRefused")<{ readonly lines: ReadonlyArray<string> }> {
  override readonly [Runtime.errorReported] = false
}

/** Fails with the lines of every invalid setting in `env`. */
export const checkSettings = (env: Env): Effect.Effect<void, InvalidSetting> => {
  const lines = invalidSettings(env)
  return lines.length === 0 ? Effect.void : Effect.fail(new InvalidSetting({ message: lines.join("\n") }))
}

const LISTEN_ADVICE: Record<string, string> = {
  EADDRINUSE: "the address is already in use: set PORT to a free port (or HOST to another address)",
  EACCES: "permission denied: set PORT to a port above 1023",
  EADDRNOTAVAIL: "the address is not one of this machine's: set HOST to one of its addresses (127.0.0.1 by default)",
  ENOTFOUND: "the host name does not resolve: set HOST to an address of this machine (127.0.0.1 by default)"
}

const listenLine = (error: unknown, env: Env): string | undefined => {
  if (typeof error !== "object" || error === null || (error as { _tag?: unknown })._tag !== "ServeError") return undefined
  const cause = (error as { cause?: NodeJS.ErrnoException & { address?: string; port?: number; hostname?: string } }).cause
  const advice = cause?.code === undefined ? undefined : LISTEN_ADVICE[cause.code]
  const host = cause?.address ?? cause?.hostname ?? env["HOST"] ?? "127.0.0.1"
  const port = cause?.port ?? env["PORT"] ?? "8787"
  const where = `${host.includes(":") ? `[${host}]` : host}:${port}`
  return advice === undefined
    ? `cannot listen on ${where}: ${cause?.message ?? String(cause)} (check HOST and PORT)`
    : `cannot listen on ${where} (${cause?.code}): ${advice}`
}

/** The lines a failed start prints, or undefined when it is no configuration problem. */
export const startupFailureLines = (cause: Cause.Cause<unknown>, env: Env): ReadonlyArray<string> | undefined => {
  if (Cause.hasInterruptsOnly(cause)) return undefined
  const error = Cause.squash(cause)
  if (error instanceof InvalidSetting) return error.message.split("\n")
  const line = listenLine(error, env) ?? configErrorLine(error, env)
  return line === undefined ? undefined : [line]
}

/**
 * Runs the server with its settings checked first; a refusal prints one line
 * per problem on stderr (`Refusing to start: …`) and fails with
 * `StartupRefused` (exit code 1, nothing more printed).
 */
export const withStartupChecks = <A, E, R>(
  server: Effect.Effect<A, E, R>,
  env: Env = process.env
): Effect.Effect<A, E | InvalidSetting | StartupRefused, R> =>
  Effect.suspend(() => checkSettings(env)).pipe(
    Effect.andThen(server),
    Effect.catchCause((cause): Effect.Effect<never, E | InvalidSetting | StartupRefused> => {
      const lines = startupFailureLines(cause, env)
      if (lines === undefined) return Effect.failCause(cause)
      return Effect.sync(() => process.stderr.write(lines.map(refusal).join("\n") + "\n")).pipe(
        Effect.andThen(Effect.fail(new StartupRefused({ lines })))
      )
    })
  )
