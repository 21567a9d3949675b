/**
 * The production build (`node dist/server/src/main.js`) as a child process,
 * for tests about the process itself: its signals, its exit code, what it
 * leaves in the database. Built once before the suite (scripts/vitest-build.ts).
 */
import { Effect } from "effect"
import { spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { createServer } from "node:net"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { BUILT_SERVER_MAIN } from "../../../../scripts/build.ts"

const root = path.resolve(import.meta.dirname, "../../../..")
const node = path.join(root, "node_modules/.bin/node")

export interface ServerProcess {
  readonly child: ChildProcess
  readonly url: string
  /** Everything it wrote, stdout and stderr. */
  readonly output: () => string
  /** Its exit code (null when a signal ended it). */
  readonly exited: Promise<number | null>
}

/** A port nothing listens on right now (PORT must be 1..65535). */
export const freePort = Effect.promise(() =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port
      server.close(() => resolve(port))
    })
  })
)

/**
 * Spawns the server (`argv`: the built main, or another entry such as the CLI's `serve`) with exactly `env` (and PATH); resolves once it listens (its log line names the
 * address, so LOG_LEVEL must be info or lower), fails with its output if it exits first. SIGKILLed
 * with the scope if still running.
 */
export const startServerProcess = (env: Record<string, string>, argv: ReadonlyArray<string> = [BUILT_SERVER_MAIN]) =>
  Effect.acquireRelease(
    Effect.callback<ServerProcess, Error>((resume) => {
      const child = spawn(node, argv, { env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] })
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
      let output = ""
      let done = false
      const onData = (chunk: Buffer) => {
        output += chunk.toString("utf8")
        const match = /Listening on (http:\/\/[^\s"]+)/.exec(output)
        if (match && !done) {
          done = true
          resume(Effect.succeed({ child, url: match[1]!.replace(/\/$/, ""), output: () => output, exited }))
        }
      }
      child.stdout.on("data", onData)
      child.stderr.on("data", onData)
      void exited.then((code) => {
        if (!done) {
          done = true
          resume(Effect.fail(new Error(`server exited (${code}) before listening:\n${output}`)))
        }
      })
    }),
    (server) => Effect.sync(() => void (server.child.exitCode === null && server.child.kill("SIGKILL")))
  )

/** Two replicas of the same environment, each on a free port, started together: a two-process test's pair. */
export const startServerPair = (env: Record<string, string>) =>
  Effect.gen(function*() {
    const [portA, portB] = [yield* freePort, yield* freePort]
    return yield* Effect.all(
      [startServerProcess({ ...env, PORT: String(portA) }), startServerProcess({ ...env, PORT: String(portB) })],
      { concurrency: 2 }
    )
  })

/** Spawns the server and waits for its exit, whatever it does (a start that must fail). */
export const runServerProcess = (env: Record<string, string>, timeoutMs = 60_000) =>
  Effect.promise(() =>
    new Promise<{ readonly code: number | null; readonly output: string }>((resolve) => {
      const child = spawn(node, [BUILT_SERVER_MAIN], { env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] })
      let output = ""
      child.stdout.on("data", (chunk: Buffer) => void (output += chunk.toString("utf8")))
      child.stderr.on("data", (chunk: Buffer) => void (output += chunk.toString("utf8")))
      const kill = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
      child.once("exit", (code) => {
        clearTimeout(kill)
        resolve({ code, output })
      })
    })
  )
