/** Runs the `switchboard` executable as a user would: the project's Node 22 on `bin/switchboard.js`. */
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as path from "node:path"
import { tempDir } from "./Fakes.ts"

const root = path.resolve(import.meta.dirname, "../../../..")
const node = path.join(root, "node_modules/.bin/node")
const bin = path.join(root, "packages/cli/bin/switchboard.js")

export interface CliRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export const runCli = (args: ReadonlyArray<string>, options: { readonly home?: string; readonly input?: string } = {}) =>
  Effect.promise(() =>
    new Promise<CliRun>((resolve, reject) => {
      const env: NodeJS.ProcessEnv = { ...process.env, SWITCHBOARD_HOME: options.home ?? tempDir() }
      delete env["SWITCHBOARD_SERVER"]
      delete env["SWITCHBOARD_TOKEN"]
      delete env["CHAT_TOKEN"]
      const child = spawn(node, [bin, ...args], { env, stdio: ["pipe", "pipe", "pipe"] })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
      child.on("error", reject)
      child.on("close", (code) => resolve({ code, stdout, stderr }))
      child.stdin.end(options.input ?? "")
    })
  )

