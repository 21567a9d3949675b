/**
 * `switchboard admin agents apply|list`: agents as configuration (docs/agents.md) — a file of
 * agents applied to the server, and the agents listed.
 */
import type { AgentDefinition } from "@switchboard/domain"
import { Console, Effect } from "effect"
import { Argument, Command } from "effect/cli"
import { fail, jsonFlag, printJson, withAdmin } from "./AdminClient.ts"
import { loadAgentsFile, planApply } from "./AgentsFile.ts"
import { listOrDash, writePlanned } from "./DefinitionFiles.ts"

const agentLine = (agent: AgentDefinition) =>
  `${agent.name}${agent.builtIn ? " (built in)" : ""}  tools ${listOrDash(agent.tools.map((t) => t.name))}  ` +
  `jobs ${listOrDash(agent.jobKinds)}${agent.description === "" ? "" : `  ${agent.description}`}`

const agentsApply = Command.make("apply", {
  file: Argument.String("file").pipe(
    Argument.withDescription("A JSON or YAML file: `agents:` with a list of agents, or a list of agents")
  ),
  json: jsonFlag
}, ({ file, json }) =>
  Effect.gen(function*() {
    // The file is checked before the server is asked anything.
    const agents = yield* loadAgentsFile(file).pipe(Effect.catchTag("CliFailure", (e) => fail(e.message)))
    return yield* withAdmin((client) =>
      Effect.gen(function*() {
        const { agents: existing } = yield* client.agentsAdmin.list()
        const planned = yield* planApply(agents, existing).pipe(Effect.catchTag("CliFailure", (e) => fail(e.message)))
        yield* writePlanned(planned, (agent) => client.agentsAdmin.put({ params: { name: agent.name }, payload: agent.body }), {
          json,
          key: "agents",
          nameKey: "name"
        })
      })
    )
  })).pipe(
    Command.withDescription(
      "Define the agents of a JSON or YAML file ({ agents: [{ name, description?, systemPrompt, tools?, jobKinds?, " +
        "contextSchema?, model? }] } or a bare list), checked against the API's schema first (an error names the path " +
        "in the file). Idempotent: each agent is reported created, updated or unchanged, and only the first two are " +
        "written (PUT /admin/agents/{name}). Agents absent from the file are left as they are."
    )
  )

const agentsList = Command.make("list", { json: jsonFlag }, ({ json }) =>
  withAdmin((client) =>
    Effect.gen(function*() {
      const { agents } = yield* client.agentsAdmin.list()
      if (json) return yield* printJson({ agents })
      for (const agent of agents) yield* Console.log(agentLine(agent))
    })
  )).pipe(
    Command.withDescription("Every agent, the built-in one first: name, client tools, job kinds, description (--json adds the prompts).")
  )

export const agentsGroup = Command.make("agents").pipe(
  Command.withDescription("Agents as configuration: apply a file of agents, list them."),
  Command.withSubcommands([agentsApply, agentsList])
)
