/** Runs the `switchboard` executable as a user would: the project's Node 22 on `bin/switchboard.js`. */
import { Effect } from "effect"
import { spawn } from "node:child_process"
import type { ChildProcessWithoutNullStreams } from "node:child_process"
import * as path from "node:path"
import { tempDir } from "@switchboard/client/testing"

const root = path.resolve(import.meta.dirname, "../../../..")
const node = path.join(root, "node_modules/.bin/node")
const bin = path.join(root, "packages/cli/bin/switchboard.js")

export interface CliRun {
  readonly code: number | null
  readonly signal?: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

export interface CliOptions {
  readonly home?: string
  readonly input?: string
  /** Leave stdin open after `input`: the test writes more (`child.stdin.write`) and ends it. */
  readonly keepStdinOpen?: boolean
  /** Added to (or, when `undefined`, removed from) the test process's environment. */
  readonly env?: Readonly<Record<string, string | undefined>>
}

const cliEnv = (options: CliOptions): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, SWITCHBOARD_HOME: options.home ?? tempDir() }
  delete env["SWITCHBOARD_SERVER"]
  delete env["SWITCHBOARD_TOKEN"]
  delete env["CHAT_TOKEN"]
  delete env["SWITCHBOARD_USER"]
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[name]
    else env[name] = value
  }
  return env
}

/** A running CLI: its output so far, and its end. */
export interface SpawnedCli {
  readonly child: ChildProcessWithoutNullStreams
  readonly stdout: () => string
  readonly stderr: () => string
  readonly exited: Promise<CliRun>
}

export const spawnCli = (args: ReadonlyArray<string>, options: CliOptions = {}): SpawnedCli => {
  const child = spawn(node, [bin, ...args], { env: cliEnv(options), stdio: ["pipe", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
  const exited = new Promise<CliRun>((resolve, reject) => {
    child.on("error", reject)
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }))
  })
  if (options.keepStdinOpen === true) child.stdin.write(options.input ?? "")
  else child.stdin.end(options.input ?? "")
  return { child, stdout: () => stdout, stderr: () => stderr, exited }
}

export const runCli = (args: ReadonlyArray<string>, options: CliOptions = {}) =>
  Effect.promise(() => spawnCli(args, options).exited)
