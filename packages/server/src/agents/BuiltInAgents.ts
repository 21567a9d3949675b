/**
 * The agents seeded in code (see BuiltInAgent.ts), by name: listed first by
 * `GET /admin/agents`, never stored, never replaced or deleted.
 */
import type { BuiltInAgent } from "./BuiltInAgent.ts"
import { mediaEditor } from "./MediaEditor.ts"

export const builtInAgents: ReadonlyMap<string, BuiltInAgent> = new Map(
  [mediaEditor].map((agent) => [agent.definition.name, agent])
)

/** The built-in agent a definition is, if it is one. */
export const builtInOf = (agent: { readonly name: string; readonly builtIn: boolean }): BuiltInAgent | undefined =>
  agent.builtIn ? builtInAgents.get(agent.name) : undefined
