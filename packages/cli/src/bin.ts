/**
 * Entry point of the `switchboard` executable: the command tree on the Node
 * runtime. The platform is imported by module, not through the
 * `@effect/platform-node` barrel, which loads every Node adapter (HTTP
 * server, sockets, workers…) and would triple the start-up time of `chat`.
 *
 * A stop asked for by SIGTERM or SIGINT that ends cleanly exits 0, as
 * `npm start` does: `serve` and `host run` run under process managers, which
 * read runMain's default 130 as a crash (see the domain's ShutdownExit.ts).
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { shutdownTeardown, watchShutdownSignals } from "@switchboard/domain"
import { Effect } from "effect"
import { run } from "./cli/Cli.ts"

run.pipe(Effect.provide(NodeServices.layer), (program) =>
  NodeRuntime.runMain(program, { teardown: shutdownTeardown(watchShutdownSignals()) }))
