/**
 * The floors' processes, started beside the server: the node:http pass-through (and, with one
 * INSERT, on the backend's database), the SSE relay, and the same two written on the server's
 * stack. Each is a child process entry point; this names their files for the cases that start them.
 */
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { scratchUrl } from "./postgres.ts"
import { cleanEnv, startHelper, workDir } from "./processes.ts"

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))
export const PROXY = here("./proxy.ts")
export const SSE_RELAY = here("./sse-relay.ts")
export const STACK_SSE_RELAY = here("./stack-sse-relay.ts")
export const STACK_PROXY = here("./stack-proxy.ts")

/** The one-INSERT proxy on the backend's database. */
export const startInsertFloor = (upstreamPort: number, backend: "embedded" | "postgres", name: string) => {
  const env = cleanEnv()
  if (backend === "postgres") env["BENCH_DATABASE_URL"] = scratchUrl!
  else env["BENCH_DATA_DIR"] = join(workDir, `floor-pgdata-${name}`)
  return startHelper(`one-INSERT proxy (${backend})`, PROXY, [String(upstreamPort), "insert"], env)
}
