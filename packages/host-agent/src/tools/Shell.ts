/**
 * `shell {command, args}`: runs a program of the `--allow` list in the
 * workdir, without a shell (see `RunCommand.ts`). The command must match an
 * allowed entry exactly: `ls` allows `ls` (found on PATH), not `/bin/ls` or
 * `./ls`. A non-zero exit is an outcome the planner reads, not a failure; a
 * refused command, one that cannot start, or one that runs out of time is.
 */
import { OfferedValues } from "@switchboard/domain"
import type { ToolDefinition } from "@switchboard/domain"
import { Effect, Schema } from "effect"
import { HostToolError, hostTool } from "../HostTool.ts"
import { runCommand } from "../RunCommand.ts"
import type { Workdir } from "../Workdir.ts"

export interface ShellOptions {
  readonly allow: ReadonlyArray<string>
  readonly timeoutMs: number
  readonly maxOutputBytes: number
}

export const defaultShellTimeoutMs = 30_000
export const defaultShellOutputBytes = 16 * 1024

/** The allow-list is offered to the planner (`enum`) but checked here, so a refusal says what is allowed. */
const shellArgs = (allow: ReadonlyArray<string>) =>
  Schema.Struct({
    command: Schema.String.annotate({ description: "The program, exactly as on the allowed list.", [OfferedValues]: allow }),
    args: Schema.optionalKey(Schema.Array(Schema.String).annotate({ description: "Its arguments, one string each." }))
  })

export const makeShellTool = (workdir: Workdir, options: ShellOptions): ToolDefinition => hostTool({
  name: "shell",
  description: `Run a program in the working directory, without a shell (no pipes, redirections or globbing). ` +
    `Allowed commands: ${options.allow.length === 0 ? "none" : options.allow.join(", ")}. ` +
    `Time limit ${options.timeoutMs} ms; at most ${options.maxOutputBytes} bytes of stdout and of stderr are returned.`,
  args: shellArgs(options.allow),
  execute: ({ args: argv = [], command }) =>
    Effect.gen(function*() {
      if (!options.allow.includes(command)) {
        return yield* new HostToolError({
          message: `command ${JSON.stringify(command)} is not allowed (allowed: ${options.allow.length === 0 ? "none" : options.allow.join(", ")})`
        })
      }
      if (argv.some((a) => a.includes("\u0000"))) return yield* new HostToolError({ message: "an argument contains a NUL character" })
      const outcome = yield* runCommand(command, argv, {
        cwd: workdir.root,
        timeoutMs: options.timeoutMs,
        maxOutputBytes: options.maxOutputBytes
      }).pipe(Effect.mapError((e) => new HostToolError({ message: `cannot run ${JSON.stringify(command)}: ${e.message}` })))
      if (outcome.timedOut) {
        return yield* new HostToolError({ message: `${command} did not finish within ${options.timeoutMs} ms and was killed` })
      }
      return {
        exitCode: outcome.exitCode,
        ...(outcome.signal === null ? {} : { signal: outcome.signal }),
        stdout: outcome.stdout.toString("utf8"),
        stderr: outcome.stderr.toString("utf8"),
        ...(outcome.truncated ? { truncated: true } : {})
      }
    })
})
