/**
 * `npm start`: the server, configured from the environment (see README).
 *
 * V8's settings come first (`system/V8Tuning.ts`: pretenuring off, the old
 * generation's growth capped), then Effect's Schema JIT compiler, before any
 * schema is built (it compiles each decoder to a function on first use;
 * measured with `npm run bench`). `SCHEMA_JIT=off` keeps the interpreter, for
 * comparison or where generated code is not allowed.
 *
 * SIGTERM or SIGINT shuts it down gracefully (jobs given back, see
 * `jobs/ClaimGate.ts`) and exits 0; a start that fails exits non-zero.
 */
import { setFlagsFromString } from "node:v8"
import { v8TuningFor } from "./system/V8Tuning.ts"

const tuning = v8TuningFor(process.env)
if (tuning._tag === "Invalid") {
  console.error(`Refusing to start: ${tuning.message}`)
  process.exit(1)
}
for (const flag of tuning.flags) setFlagsFromString(flag)
if (process.env["SCHEMA_JIT"] !== "off") await import("effect/schema/SchemaJITCompiler/enable")
const NodeRuntime = await import("@effect/platform-node/NodeRuntime")
const { runServer } = await import("./Server.ts")
const { shutdownTeardown, watchShutdownSignals } = await import("./system/ShutdownExit.ts")

// A clean SIGTERM/SIGINT shutdown exits 0, not runMain's 130 (see ShutdownExit.ts).
NodeRuntime.runMain(runServer, { teardown: shutdownTeardown(watchShutdownSignals()) })
