/**
 * The errors of the admin routes that write agents and sub-agent kinds (docs/agents.md,
 * docs/subagents.md); the table of codes is `ErrorCodes.ts`, every declared error listed in
 * `Errors.ts` (`declaredErrors`).
 */
import { Schema } from "effect"
import { statusOfCode } from "./ErrorCodes.ts"

export class AgentExists extends Schema.Error<AgentExists>("AgentExists")({
  error: Schema.String,
  code: Schema.tag("agent_exists"),
  agent: Schema.String
}, { httpApiStatus: statusOfCode.agent_exists, description: "An agent of that name exists (`PUT /admin/agents/{name}` replaces it)" }) {
  get _tag() {
    return "AgentExists" as const
  }
}

export class AgentBuiltIn extends Schema.Error<AgentBuiltIn>("AgentBuiltIn")({
  error: Schema.String,
  code: Schema.tag("agent_builtin"),
  agent: Schema.String
}, { httpApiStatus: statusOfCode.agent_builtin, description: "The built-in agent cannot be replaced or deleted" }) {
  get _tag() {
    return "AgentBuiltIn" as const
  }
}

export class SubagentNotFound extends Schema.Error<SubagentNotFound>("SubagentNotFound")({
  error: Schema.String,
  code: Schema.tag("subagent_not_found"),
  kind: Schema.String
}, { httpApiStatus: statusOfCode.subagent_not_found, description: "No sub-agent kind of that name (built in or defined)" }) {
  get _tag() {
    return "SubagentNotFound" as const
  }
}

export class SubagentBuiltIn extends Schema.Error<SubagentBuiltIn>("SubagentBuiltIn")({
  error: Schema.String,
  code: Schema.tag("subagent_builtin"),
  kind: Schema.String
}, { httpApiStatus: statusOfCode.subagent_builtin, description: "A built-in sub-agent kind cannot be replaced or deleted" }) {
  get _tag() {
    return "SubagentBuiltIn" as const
  }
}

/** A kind an agent still names cannot be deleted: the agent's next turn would offer a tool nothing runs. */
export class SubagentInUse extends Schema.Error<SubagentInUse>("SubagentInUse")({
  error: Schema.String,
  code: Schema.tag("subagent_in_use"),
  kind: Schema.String,
  /** The agents that name it. */
  agents: Schema.Array(Schema.String)
}, { httpApiStatus: statusOfCode.subagent_in_use, description: "An agent still names the kind in its jobKinds" }) {
  get _tag() {
    return "SubagentInUse" as const
  }
}
