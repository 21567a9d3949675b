/**
 * The system prompt of a turn: the agent's template filled from the request's
 * context (`fillSystemPrompt`), what the offered server tools say of
 * themselves appended when some are — or, for a built-in agent with a prompt
 * of its own, that prompt.
 */
import type { AgentDefinition, JsonObject } from "@switchboard/domain"
import { fillSystemPrompt } from "@switchboard/domain"
import { builtInOf } from "./BuiltInAgents.ts"

export const systemPromptOf = (
  agent: AgentDefinition,
  context: JsonObject | undefined,
  serverTools: string | undefined
): string => {
  const own = builtInOf(agent)?.prompt
  if (own !== undefined) return own(context, serverTools)
  const filled = fillSystemPrompt(agent.systemPrompt, context)
  return serverTools === undefined ? filled : `${filled}\n\n${serverTools}`
}
