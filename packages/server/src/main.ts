/**
 * `npm start`: the server, configured from the environment (see README).
 *
 * Effect's Schema JIT compiler is installed first, before any schema is built
 * (it compiles each decoder to a function on first use; measured with
 * `npm run bench`). `SCHEMA_JIT=off` keeps the interpreter, for comparison or
 * where generated code is not allowed.
 */
if (process.env["SCHEMA_JIT"] !== "off") await import("effect/schema/SchemaJITCompiler/enable")
const NodeRuntime = await import("@effect/platform-node/NodeRuntime")
const { runServer } = await import("./Server.ts")

NodeRuntime.runMain(runServer)
