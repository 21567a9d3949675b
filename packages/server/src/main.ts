/**
 * `npm start`: the server, configured from the environment (see README).
 *
 * V8's settings come first (`system/V8Tuning.ts`: pretenuring off, the old
 * generation's growth capped), then Effect's Schema JIT compiler, before any
 * schema is built (it compiles each decoder to a function on first use;
 * measured with `npm run bench`). `SCHEMA_JIT=off` keeps the interpreter, for
 * comparison or where generated code is not allowed.
 */
import { setFlagsFromString } from "node:v8"
import { responseLimitFor } from "./llm/ResponseLimit.ts"
import { v8TuningFor } from "./system/V8Tuning.ts"

const tuning = v8TuningFor(process.env)
if (tuning._tag === "Invalid") {
  console.error(`Refusing to start: ${tuning.message}`)
  process.exit(1)
}
// Read by the chat provider and the planner's pools alike: checked once, here, before either is built.
const responseLimit = responseLimitFor(process.env)
if (responseLimit._tag === "Invalid") {
  console.error(`Refusing to start: ${responseLimit.message}`)
  process.exit(1)
}
for (const flag of tuning.flags) setFlagsFromString(flag)
if (process.env["SCHEMA_JIT"] !== "off") await import("effect/schema/SchemaJITCompiler/enable")
const NodeRuntime = await import("@effect/platform-node/NodeRuntime")
const { runServer } = await import("./Server.ts")

NodeRuntime.runMain(runServer)
