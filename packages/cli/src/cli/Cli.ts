/**
 * The `switchboard` command tree. Each subcommand lives in its own module;
 * `host run` and `admin …` (CONTRACT.md, CLI) will join `chat` and `serve`
 * in the list below.
 */
import { Command } from "effect/cli"
import { chatCommand } from "./ChatCommand.ts"
import { jobsCommand } from "./JobsCommand.ts"
import { serveCommand } from "./ServeCommand.ts"

export const version = "0.1.0"

export const switchboard = Command.make("switchboard").pipe(
  Command.withDescription("Switchboard: tool-calling LLM agents — the server, and a client to talk to it."),
  Command.withSubcommands([chatCommand, jobsCommand, serveCommand])
)

/** Parses `process.argv` (through the Stdio service) and runs the chosen command. */
export const run = Command.run(switchboard, { version })
