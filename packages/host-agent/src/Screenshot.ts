/**
 * `--screenshot-command`: a picture of the host's screen taken before each
 * step and attached to the decision request as `{ mediaType: "image/png",
 * data: base64 }`.
 *
 * The command is split on whitespace (no quoting, no shell) and run like a
 * `shell` tool call (`RunCommand.ts`: time limit, minimal environment, in the
 * workdir); the PNG is what it writes to **stdout** (e.g.
 * `grim -`, `scrot -`, `import -window root png:-`). Its output must start
 * with the PNG signature and fit in `maxScreenshotBytes` (the decision body is
 * capped at 10 MiB and base64 grows it by a third).
 */
import { Data, Effect } from "effect"
import { runCommand } from "./RunCommand.ts"

export class ScreenshotError extends Data.TaggedError("ScreenshotError")<{
  readonly message: string
}> {}

export interface Screenshot {
  readonly mediaType: "image/png"
  /** base64, no `data:` prefix */
  readonly data: string
}

export const maxScreenshotBytes = 7 * 1024 * 1024
export const screenshotTimeoutMs = 15_000

const pngSignature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

/** The program and its arguments of a `--screenshot-command` value. */
export const parseScreenshotCommand = (line: string): ReadonlyArray<string> => line.trim().split(/\s+/).filter((s) => s !== "")

export const takeScreenshot = (commandLine: string, cwd: string): Effect.Effect<Screenshot, ScreenshotError> =>
  Effect.gen(function*() {
    const [command, ...args] = parseScreenshotCommand(commandLine)
    if (command === undefined) return yield* new ScreenshotError({ message: "the screenshot command is empty" })
    const outcome = yield* runCommand(command, args, {
      cwd,
      timeoutMs: screenshotTimeoutMs,
      maxOutputBytes: maxScreenshotBytes + 1
    }).pipe(Effect.mapError((e) => new ScreenshotError({ message: `cannot run ${command}: ${e.message}` })))
    if (outcome.timedOut) return yield* new ScreenshotError({ message: `${command} took longer than ${screenshotTimeoutMs} ms` })
    if (outcome.exitCode !== 0) {
      const stderr = outcome.stderr.toString("utf8").trim().slice(0, 200)
      return yield* new ScreenshotError({
        message: `${command} exited with ${outcome.exitCode ?? outcome.signal}${stderr === "" ? "" : `: ${stderr}`}`
      })
    }
    if (outcome.truncated || outcome.stdout.length > maxScreenshotBytes) {
      return yield* new ScreenshotError({ message: `the screenshot is larger than ${maxScreenshotBytes} bytes` })
    }
    if (!outcome.stdout.subarray(0, pngSignature.length).equals(pngSignature)) {
      return yield* new ScreenshotError({ message: `${command} did not write a PNG to stdout` })
    }
    return { mediaType: "image/png" as const, data: outcome.stdout.toString("base64") }
  })
