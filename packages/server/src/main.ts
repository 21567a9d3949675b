/**
 * `npm start`: the server, configured from the environment (see README).
 *
 * The Node version is checked first (`system/NodeVersion.ts`), then V8's
 * settings (`system/V8Tuning.ts`: pretenuring off, the old generation's
 * growth capped), then Effect's Schema JIT compiler, before any
 * schema is built (it compiles each decoder to a function on first use;
 * measured with `npm run bench`). `SCHEMA_JIT=off` keeps the interpreter, for
 * comparison or where generated code is not allowed.
 *
 * SIGTERM or SIGINT shuts it down gracefully (jobs given back, see
 * `jobs/ClaimGate.ts`) and exits 0; a start that fails exits non-zero.
 */
import { setFlagsFromString } from "node:v8"
import { refusal } from "./process/InvalidSetting.ts"
import { tooOldNode } from "./system/NodeVersion.ts"
import { SchemaJitRule } from "./system/RuntimeSettings.ts"
import { v8TuningFor } from "./system/V8Tuning.ts"

const tooOld = tooOldNode(process.versions.node)
if (tooOld !== undefined) {
  console.error(refusal(tooOld))
  process.exit(1)
}

const tuning = v8TuningFor(process.env)
if (tuning._tag === "Invalid") {
  console.error(refusal(tuning.message))
  process.exit(1)
}
for (const flag of tuning.flags) setFlagsFromString(flag)
// Any other invalid value (SCHEMA_JIT's included) is refused by `runServer`, before anything starts.
if (process.env[SchemaJitRule.name] !== "off") await import("effect/schema/SchemaJITCompiler/enable")
// Checked here as well as by `runServer`: a refusal then costs loading the settings' modules, not the whole server.
const { invalidSettings } = await import("./system/Settings.ts")
const invalid = invalidSettings(process.env)
if (invalid.length > 0) {
  console.error(invalid.map(refusal).join("\n"))
  process.exit(1)
}
const NodeRuntime = await import("@effect/platform-node/NodeRuntime")
const { runServer } = await import("./Server.ts")
const { shutdownTeardown, watchShutdownSignals } = await import("@switchboard/domain")

// A clean SIGTERM/SIGINT shutdown exits 0, not runMain's 130 (see the domain's ShutdownExit.ts).
NodeRuntime.runMain(runServer, { teardown: shutdownTeardown(watchShutdownSignals()) })
