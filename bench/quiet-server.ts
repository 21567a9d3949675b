/**
 * Benchmark child: the real server (`runServer`, exactly what `main.ts` runs)
 * with the minimum log level raised to Warn, which silences the INFO line the
 * HTTP layer writes for every request. The server has no setting for this
 * (Server.ts reads only LOG_FORMAT), so this entry point exists to measure what
 * the request log costs; it is not a configuration the server offers.
 */
import { NodeRuntime } from "@effect/platform-node"
import { runServer } from "@switchboard/server/Server"
import { Effect, References } from "effect"

NodeRuntime.runMain(runServer.pipe(Effect.provideService(References.MinimumLogLevel, "Warn")))
