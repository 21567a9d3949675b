/**
 * What a turn of an agent offers the provider: the client's tools, the server
 * tools the agent may use, its system prompt and model.
 */
import type { AgentContext, AgentDefinition, JsonObject, ToolSchema } from "@switchboard/domain"
import { BUILT_IN_AGENT, fillSystemPrompt } from "@switchboard/domain"
import type { ServerToolsShape } from "../ServerTools.ts"
import { buildSystemPrompt } from "../../agents/SystemPrompt.ts"

/** What a turn of `agent` offers the provider, and says of it. */
export interface Offer {
  readonly clientTools: ReadonlyArray<ToolSchema>
  /** The server tools offered (`ServerTools`' schemas the agent may use). */
  readonly serverTools: ReadonlyArray<ToolSchema>
  /** Whether a call is to an offered server tool (else it is the client's to execute). */
  readonly owns: (name: string) => boolean
  readonly systemPrompt: string
  readonly model: string | undefined
}

/**
 * The built-in agent offers every server tool the port has, its prompt `buildSystemPrompt` as it
 * always was; another agent offers the server tools of its `jobKinds` (a call to any other is the
 * client's, as an unknown tool's would be), its prompt its template filled from the context, with
 * what the port says of the offered tools appended only when some are.
 */
export const offerOf = (
  agent: AgentDefinition,
  context: JsonObject | undefined,
  tools: ServerToolsShape | undefined
): Offer => {
  const model = agent.model
  if (agent.name === BUILT_IN_AGENT) {
    const agentContext = context as AgentContext | undefined
    return {
      clientTools: agent.tools,
      serverTools: tools?.schemas ?? [],
      owns: tools === undefined ? () => false : tools.owns,
      systemPrompt: tools === undefined
        ? buildSystemPrompt(agentContext)
        : buildSystemPrompt(agentContext, { serverTools: tools.instructions }),
      model
    }
  }
  const kinds = new Set<string>(agent.jobKinds)
  const serverTools = (tools?.schemas ?? []).filter((schema) => kinds.has(schema.name))
  const names = serverTools.map((schema) => schema.name)
  const offered = new Set(names)
  const instructions = serverTools.length === 0 || tools === undefined
    ? undefined
    : tools.instructionsFor?.(names) ?? tools.instructions
  const filled = fillSystemPrompt(agent.systemPrompt, context)
  return {
    clientTools: agent.tools,
    serverTools,
    owns: (name) => offered.has(name),
    systemPrompt: instructions === undefined ? filled : `${filled}\n\n${instructions}`,
    model
  }
}
