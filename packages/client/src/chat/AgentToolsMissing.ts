/**
 * The agent a client names asks for client tools its registry does not
 * implement. Checked before the first turn (`GET /api/agents/{name}`): the
 * model would otherwise call a tool nobody can run, and the user would learn
 * it only mid-conversation, from a tool error the model tries to recover from.
 */
import type { AgentInfo } from "@switchboard/domain"
import { missingTools } from "@switchboard/domain"
import { Data } from "effect"

export class AgentToolsMissing extends Data.TaggedError("AgentToolsMissing")<{
  readonly message: string
  readonly agent: string
  /** Every tool of the agent the registry lacks, in the agent's order. */
  readonly missing: ReadonlyArray<string>
  readonly code: "agent_tools_missing"
}> {}

/** The error for `agent` against the tool names a registry implements, or `undefined` when none is missing. */
export const agentToolsMissing = (agent: AgentInfo, implemented: ReadonlyArray<string>): AgentToolsMissing | undefined => {
  const missing = missingTools(agent, implemented)
  if (missing.length === 0) return undefined
  return new AgentToolsMissing({
    message: `agent "${agent.name}" needs client tools this client does not implement: ${missing.join(", ")}` +
      (implemented.length === 0 ? " (it implements none)" : ` (it implements ${implemented.join(", ")})`),
    agent: agent.name,
    missing,
    code: "agent_tools_missing"
  })
}
