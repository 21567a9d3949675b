/**
 * `switchboard serve`: the server in this process (same as `npm start`).
 * Imported lazily so `chat` and `--help` do not load the database and
 * provider stack.
 */
import { Effect } from "effect"
import { Command } from "effect/cli"

export const serveCommand = Command.make("serve", {}, () =>
  Effect.gen(function*() {
    const { runServer } = yield* Effect.promise(() => import("@switchboard/server"))
    return yield* runServer
  })).pipe(
    Command.withDescription(
      "Start the Switchboard server on HOST:PORT (default 127.0.0.1:8787); configured by environment (see docs/configuration.md)."
    ),
    Command.withShortDescription("Start the Switchboard server")
  )
