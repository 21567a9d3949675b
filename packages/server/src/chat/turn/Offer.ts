/**
 * What a turn of an agent offers the provider: the client's tools the agent
 * lists, the server tools the agent may use (the tools' port decides from the
 * definition), its system prompt and model. The same for every agent, the
 * built-in one included: what is particular to an agent is in its definition
 * and in agents/.
 */
import type { AgentDefinition, JsonObject, ToolSchema } from "@switchboard/domain"
import { systemPromptOf } from "../../agents/SystemPrompt.ts"
import type { ServerToolsShape } from "../ServerTools.ts"
import { nothingOffered } from "../ServerTools.ts"

/** What a turn of `agent` offers the provider, and says of it. */
export interface Offer {
  readonly clientTools: ReadonlyArray<ToolSchema>
  /** The server tools offered. */
  readonly serverTools: ReadonlyArray<ToolSchema>
  /** Whether a call is to an offered server tool (else it is the client's to execute). */
  readonly owns: (name: string) => boolean
  readonly systemPrompt: string
  readonly model: string | undefined
}

/** `tools` undefined: a turn without server tools (one without `chatId`). */
export const offerOf = (
  agent: AgentDefinition,
  context: JsonObject | undefined,
  tools: ServerToolsShape | undefined
): Offer => {
  const offered = tools?.offeredTo(agent) ?? nothingOffered
  const names = new Set(offered.schemas.map((schema) => schema.name))
  return {
    clientTools: agent.tools,
    serverTools: offered.schemas,
    owns: (name) => names.has(name),
    systemPrompt: systemPromptOf(agent, context, offered.instructions),
    model: agent.model
  }
}
