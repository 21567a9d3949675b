/**
 * `npm start`: the server, configured from the environment (see README).
 *
 * Effect's Schema JIT compiler is installed first, before any schema is built
 * (it compiles each decoder to a function on first use; measured with
 * `npm run bench`). `SCHEMA_JIT=off` keeps the interpreter, for comparison or
 * where generated code is not allowed.
 *
 * V8's allocation-site pretenuring is turned off (`PRETENURING=on` keeps it).
 * Under load a request's objects outlive a scavenge or two, so V8 learns to
 * allocate them straight into the old generation, where they die and pile up
 * until the next full collection: measured on the chat route, the peak RSS
 * goes from ~450 MB to ~310 MB without it, at the same CPU per request.
 */
import { setFlagsFromString } from "node:v8"

if (process.env["PRETENURING"] !== "on") setFlagsFromString("--no-allocation-site-pretenuring")
if (process.env["SCHEMA_JIT"] !== "off") await import("effect/schema/SchemaJITCompiler/enable")
const NodeRuntime = await import("@effect/platform-node/NodeRuntime")
const { runServer } = await import("./Server.ts")

NodeRuntime.runMain(runServer)
