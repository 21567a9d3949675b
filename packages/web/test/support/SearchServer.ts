/**
 * examples/search-server.ts as a process for the browser tests (the research sub-agent's search and
 * pages), on a free port: started as its own test runs it.
 */
import { spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { resolve } from "node:path"

/** examples/search-server.ts on a free port (as its own test runs it): its origin, and the process. */
export const startSearchServer = () =>
  new Promise<{ origin: string; child: ChildProcess }>((done, fail) => {
    const child = spawn(process.execPath, [resolve(import.meta.dirname, "../../../../examples/search-server.ts")], {
      env: { ...process.env, PORT: "0" },
      stdio: ["ignore", "pipe", "inherit"]
    })
    child.once("error", fail)
    child.once("exit", (code) => fail(new Error(`examples/search-server.ts exited (${code})`)))
    child.stdout!.on("data", (chunk: Buffer) => {
      const origin = /search server on (http:\/\/127\.0\.0\.1:\d+)/.exec(chunk.toString())?.[1]
      if (origin !== undefined) done({ origin, child })
    })
  })
