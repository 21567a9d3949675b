/**
 * Entry point of the `switchboard` executable: the command tree on the Node
 * runtime. The platform is imported by module, not through the
 * `@effect/platform-node` barrel, which loads every Node adapter (HTTP
 * server, sockets, workers…) and would triple the start-up time of `chat`.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect } from "effect"
import { run } from "./cli/Cli.ts"

run.pipe(Effect.provide(NodeServices.layer), NodeRuntime.runMain)
