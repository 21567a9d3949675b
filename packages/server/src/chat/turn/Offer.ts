/**
 * What a turn of an agent offers the provider: the client's tools the agent
 * lists, the server tools the agent may use (the tools' port decides from the
 * definition), its system prompt and model. The same for every agent, the
 * built-in one included: what is particular to an agent is in its definition
 * and in agents/.
 */
import type { AgentDefinition, JsonObject, ToolSchema } from "@switchboard/domain"
import { Effect } from "effect"
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
  /** Whether an offered server tool's call waits for a user's approval (`OfferedTools.approval`): never run by the turn. */
  readonly needsApproval: (name: string) => boolean
  /** Whether an offered server tool's call waits on another service (`OfferedTools.remote`). */
  readonly remote: (name: string) => boolean
  readonly systemPrompt: string
  readonly model: string | undefined
}

/**
 * `tools` undefined: a turn without server tools (one without `chatId`). A server tool named as
 * one of the agent's client tools is not offered: the client's tool keeps its name.
 */
export const offerOf = (
  agent: AgentDefinition,
  context: JsonObject | undefined,
  tools: ServerToolsShape | undefined
): Effect.Effect<Offer> =>
  Effect.map(tools?.offeredTo(agent) ?? Effect.succeed(nothingOffered), (offered) => {
    const clientNames = new Set(agent.tools.map((tool) => tool.name))
    const serverTools = offered.schemas.filter((schema) => !clientNames.has(schema.name))
    const names = new Set(serverTools.map((schema) => schema.name))
    const remote = new Set(offered.remote ?? [])
    const prefixes = offered.prefixes ?? []
    const approval = new Set((offered.approval ?? []).filter((name) => names.has(name)))
    return {
      clientTools: agent.tools,
      serverTools,
      owns: (name) =>
        !approval.has(name) && (names.has(name) || (!clientNames.has(name) && prefixes.some((prefix) => name.startsWith(prefix)))),
      needsApproval: (name) => approval.has(name),
      remote: (name) => remote.has(name),
      systemPrompt: systemPromptOf(agent, context, offered.instructions),
      model: agent.model
    }
  })
