/**
 * The `switchboard` command tree (docs/cli.md). Each subcommand lives
 * in its own module.
 */
import { Command } from "effect/cli"
import { adminCommand } from "./AdminCommand.ts"
import { chatCommand } from "./ChatCommand.ts"
import { hostCommand } from "./HostCommand.ts"
import { jobsCommand } from "./JobsCommand.ts"
import { serveCommand } from "./ServeCommand.ts"

export const version = "0.1.0"

export const switchboard = Command.make("switchboard").pipe(
  Command.withDescription("Switchboard: tool-calling LLM agents — the server, and a client to talk to it."),
  Command.withSubcommands([chatCommand, jobsCommand, serveCommand, hostCommand, adminCommand])
)

/** Parses `process.argv` (through the Stdio service) and runs the chosen command. */
export const run = Command.run(switchboard, { version })
