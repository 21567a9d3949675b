/**
 * Runs one local program for the host agent, bounded: no shell (the program
 * and its arguments go to `spawn` as an array, so `;`, `|`, `$()` and globs
 * are plain characters), a time limit after which the process is killed
 * (SIGKILL: a program that ignores SIGTERM must not hold the step), and a cap
 * on the output kept (the rest is drained and dropped, so a chatty program
 * neither blocks on a full pipe nor fills the host's memory).
 *
 * The child gets a minimal environment (PATH, HOME, LANG, TMPDIR), never the
 * host agent's own: the host token must not reach a program whose output is
 * sent to the planner.
 */
import { Effect } from "effect"
import { spawn } from "node:child_process"

export interface RunLimits {
  readonly cwd: string
  readonly timeoutMs: number
  /** Bytes kept of stdout, and separately of stderr. */
  readonly maxOutputBytes: number
}

export interface RunOutcome {
  /** `null` when the process was killed by a signal (the time limit included). */
  readonly exitCode: number | null
  readonly signal: string | null
  readonly timedOut: boolean
  readonly stdout: Buffer
  readonly stderr: Buffer
  /** Output beyond `maxOutputBytes` was dropped. */
  readonly truncated: boolean
}

const childEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const name of ["PATH", "HOME", "LANG", "TMPDIR"]) {
    const value = process.env[name]
    if (value !== undefined) env[name] = value
  }
  return env
}

/** Fails only when the program could not be started (not found, not executable): its exit status is an outcome. */
export const runCommand = (
  command: string,
  args: ReadonlyArray<string>,
  limits: RunLimits
): Effect.Effect<RunOutcome, Error> =>
  Effect.callback<RunOutcome, Error>((resume) => {
    const child = spawn(command, [...args], {
      cwd: limits.cwd,
      env: childEnv(),
      shell: false,
      stdio: ["ignore", "pipe", "pipe"]
    })
    const kept = { stdout: [] as Array<Buffer>, stderr: [] as Array<Buffer> }
    const sizes = { stdout: 0, stderr: 0 }
    let truncated = false
    let timedOut = false
    const collect = (stream: "stdout" | "stderr") => (chunk: Buffer) => {
      const room = limits.maxOutputBytes - sizes[stream]
      if (room <= 0) {
        truncated = true
        return
      }
      const piece = chunk.length > room ? chunk.subarray(0, room) : chunk
      if (piece.length < chunk.length) truncated = true
      kept[stream].push(piece)
      sizes[stream] += piece.length
    }
    child.stdout.on("data", collect("stdout"))
    child.stderr.on("data", collect("stderr"))
    const timer = setTimeout(() => {
      timedOut = true
      child.kill("SIGKILL")
    }, limits.timeoutMs)
    child.on("error", (error) => {
      clearTimeout(timer)
      resume(Effect.fail(error))
    })
    child.on("close", (exitCode, signal) => {
      clearTimeout(timer)
      resume(Effect.succeed({
        exitCode,
        signal,
        timedOut,
        stdout: Buffer.concat(kept.stdout),
        stderr: Buffer.concat(kept.stderr),
        truncated
      }))
    })
    // Interrupted (shutdown, lost lease): the program must not outlive the step.
    return Effect.sync(() => {
      clearTimeout(timer)
      child.kill("SIGKILL")
    })
  })
