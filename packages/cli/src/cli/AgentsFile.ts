/**
 * A declarative file of agents (`switchboard admin agents apply FILE`): JSON
 * or YAML, `{ agents: [ … ] }` or a bare list, each entry what `POST
 * /admin/agents` takes (`NewAgent`). Checked here, against the domain's
 * schema, before anything is sent: an error names the file and the path in it
 * (`agents[1].systemPrompt`), and an unknown key is an error rather than a
 * silently dropped setting.
 *
 * `planApply` compares the file with the server's agents so that applying is
 * idempotent: only the agents that differ are written (`PUT`), and applying
 * the same file twice writes nothing the second time — but for an agent whose
 * MCP servers are given header values: those are write-only (the server
 * answers their names only), so such an agent is written every time. What
 * this shares with the sub-agent kinds' files is in `DefinitionFiles.ts`.
 */
import { agentDefinitionOf, NewAgent } from "@switchboard/domain"
import type { AgentBody, AgentDefinition } from "@switchboard/domain"
import { Effect, Schema } from "effect"
import type { CliFailure } from "./CliFailure.ts"
import { decodeDefinition, invalidFile, planApply as planDefinitions, readDefinitionFile } from "./DefinitionFiles.ts"
import type { Planned } from "./DefinitionFiles.ts"

const AgentsDocument = Schema.Struct({ agents: Schema.Array(NewAgent) })
const AgentsList = Schema.Array(NewAgent)

/** The agents of `file`, validated; fails with a `CliFailure` naming the file and, for a bad entry, its path. */
export const loadAgentsFile = (file: string) =>
  Effect.gen(function*() {
    const invalid = invalidFile("agents file", file)
    const document = yield* readDefinitionFile("agents file", file)
    const agents = Array.isArray(document)
      ? yield* decodeDefinition(AgentsList, document, invalid)
      : typeof document === "object" && document !== null && "agents" in document
      ? (yield* decodeDefinition(AgentsDocument, document, invalid)).agents
      : yield* Effect.fail(invalid("expected `agents:` with a list of agents, or a list of agents"))
    const seen = new Set<string>()
    for (const agent of agents) {
      if (seen.has(agent.name)) return yield* Effect.fail(invalid(`agent "${agent.name}" is defined twice`))
      seen.add(agent.name)
    }
    return agents
  })

/** One agent of the file, as it will be applied (`body`: what `PUT /admin/agents/{name}` takes). */
export type PlannedAgent = Planned<AgentBody>

/**
 * What applying `agents` over the server's `existing` ones does, agent by
 * agent, in the file's order; fails when the file names a built-in agent (the
 * server refuses to replace it).
 */
export const planApply = (
  agents: ReadonlyArray<NewAgent>,
  existing: ReadonlyArray<AgentDefinition>
): Effect.Effect<ReadonlyArray<PlannedAgent>, CliFailure> =>
  planDefinitions({
    noun: "agent",
    entries: agents.map(({ name, ...body }) => ({ name, body })),
    existing: new Map(existing.map((agent) => [agent.name, agent])),
    definitionOf: agentDefinitionOf
  })
