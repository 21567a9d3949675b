/**
 * Agents (docs/agents.md): what the chat route tells the model and offers it —
 * a system prompt, the client tools, the job kinds it may dispatch — as data,
 * so a product defines its own agent without changing Switchboard. The
 * built-in `media-editor` is the spec's video-editor agent and the default.
 *
 * Pure and shared: the server stores and applies agents, the admin API and
 * the CLI's `admin agents apply` write them, clients read an agent's public
 * view to check their tool registry against it.
 */
import { Schema } from "effect"
import { KindName } from "./JobKind.ts"
import { JsonObject, Text } from "./Json.ts"
import { MAX_MCP_SERVERS, McpServerBody, mcpServerViewOf, McpServerView } from "./McpServers.ts"
import { ToolSchema } from "./ToolSchema.ts"

/** The built-in agent: the spec's media editor. */
export const BUILT_IN_AGENT = "media-editor"

/** 1–64 of `a-z 0-9 - _`: safe in a URL path, a file name and a log line. */
export const AgentName = Schema.String.check(
  // `u`: a pattern the JSON Schema document states (JSON Schema patterns are Unicode ones).
  Schema.isPattern(/^[a-z0-9_-]{1,64}$/u, { message: "must be 1 to 64 of a-z, 0-9, - and _" })
)
export type AgentName = typeof AgentName.Type

/** The largest system prompt template accepted (a prompt is sent on every turn: bound it). */
export const MAX_SYSTEM_PROMPT_CHARS = 64 * 1024

/** Tools and job kinds an agent may declare at most. */
export const MAX_AGENT_TOOLS = 64

/** What an operator writes (`PUT /admin/agents/{name}`; `POST` adds the name). */
export const AgentBody = Schema.Struct({
  description: Schema.optionalKey(Text),
  systemPrompt: Text.check(Schema.isMinLength(1), Schema.isMaxLength(MAX_SYSTEM_PROMPT_CHARS)),
  tools: Schema.optionalKey(Schema.Array(ToolSchema).check(Schema.isMaxLength(MAX_AGENT_TOOLS))),
  jobKinds: Schema.optionalKey(Schema.Array(KindName).check(Schema.isMaxLength(MAX_AGENT_TOOLS))),
  /** A JSON Schema the request's `context` must satisfy. */
  contextSchema: Schema.optionalKey(JsonObject),
  /** Overrides `LLM_MODEL` for this agent's turns. */
  model: Schema.optionalKey(Text.check(Schema.isMinLength(1), Schema.isMaxLength(200))),
  /** MCP servers whose tools the server runs in this agent's turns (docs/tools.md). */
  mcpServers: Schema.optionalKey(Schema.Array(McpServerBody).check(Schema.isMaxLength(MAX_MCP_SERVERS)))
})
export type AgentBody = typeof AgentBody.Type

export const NewAgent = Schema.Struct({ name: AgentName, ...AgentBody.fields })
export type NewAgent = typeof NewAgent.Type

/** An agent as the operator sees it (`GET /admin/agents`). */
export const AgentDefinition = Schema.Struct({
  name: AgentName,
  description: Text,
  systemPrompt: Text,
  tools: Schema.Array(ToolSchema),
  jobKinds: Schema.Array(KindName),
  contextSchema: Schema.optionalKey(JsonObject),
  model: Schema.optionalKey(Text),
  /** Its MCP servers, their headers' names only. */
  mcpServers: Schema.optionalKey(Schema.Array(McpServerView)),
  builtIn: Schema.Boolean
})
export type AgentDefinition = typeof AgentDefinition.Type

/** An agent as any client sees it (`GET /api/agents/{name}`): never the prompt. */
export const AgentInfo = Schema.Struct({
  name: AgentName,
  description: Text,
  tools: Schema.Array(ToolSchema),
  jobKinds: Schema.Array(KindName),
  contextSchema: Schema.optionalKey(JsonObject)
})
export type AgentInfo = typeof AgentInfo.Type

export const agentInfoOf = (agent: AgentDefinition): AgentInfo => ({
  name: agent.name,
  description: agent.description,
  tools: agent.tools,
  jobKinds: agent.jobKinds,
  ...(agent.contextSchema === undefined ? {} : { contextSchema: agent.contextSchema })
})

/**
 * The stored definition of a new or replaced agent, its optional fields at their defaults.
 * `keptHeaders`: the header names of an MCP server whose headers the body leaves as they were.
 */
export const agentDefinitionOf = (
  name: string,
  body: AgentBody,
  keptHeaders?: (server: McpServerBody) => ReadonlyArray<string> | undefined
): AgentDefinition => ({
  name,
  description: body.description ?? "",
  systemPrompt: body.systemPrompt,
  tools: body.tools ?? [],
  jobKinds: body.jobKinds ?? [],
  ...(body.contextSchema === undefined ? {} : { contextSchema: body.contextSchema }),
  ...(body.model === undefined ? {} : { model: body.model }),
  ...(body.mcpServers === undefined || body.mcpServers.length === 0
    ? {}
    : { mcpServers: body.mcpServers.map((server) => mcpServerViewOf(server, keptHeaders?.(server))) }),
  builtIn: false
})

const PLACEHOLDER = /\{\{\s*context((?:\.[A-Za-z0-9_$-]+)*)\s*\}\}/g

/**
 * The system prompt of a turn: each `{{context.a.b}}` replaced by that value of
 * the request's context — a string as it is, any other value as JSON, a missing
 * (or null) one by an empty string. One pass over the template: a value that itself reads
 * `{{context.x}}` is text, never expanded again, so a user-supplied context
 * cannot pull other context values into the prompt.
 */
export const fillSystemPrompt = (template: string, context: unknown): string =>
  template.replace(PLACEHOLDER, (_, path: string) => {
    let value: unknown = context
    for (const key of path.split(".").slice(1)) {
      value = typeof value === "object" && value !== null && Object.hasOwn(value, key)
        ? (value as Record<string, unknown>)[key]
        : undefined
    }
    // null is "no value" as much as absent is (a context of `null`, `activeSceneId: null`).
    if (value === undefined || value === null) return ""
    return typeof value === "string" ? value : JSON.stringify(value)
  })

/** The tools of `agent` a client registry lacks (checked before the first turn). */
export const missingTools = (agent: Pick<AgentInfo, "tools">, implemented: ReadonlyArray<string>): ReadonlyArray<string> => {
  const have = new Set(implemented)
  return agent.tools.map((tool) => tool.name).filter((name) => !have.has(name))
}
