/**
 * Sub-agent kinds as definitions (docs/subagents.md): what a product's own
 * background worker is — the job tool the chat model sees (its description
 * and input parameters), the sub-agent's prompt over that input, its tools by
 * name and its MCP servers, the result it must submit (a JSON Schema), its
 * model and limits. `research`, `demo` and `visual` are the built-in
 * definitions (read-only); an operator writes the others with
 * `PUT /admin/subagents/{kind}`.
 *
 * Pure and shared: the server stores and runs them, the CLI applies and
 * prints them, the console lists them and renders any kind's result.
 */
import { Schema } from "effect"
import { MAX_SYSTEM_PROMPT_CHARS } from "./Agents.ts"
import type { JobKindSpec } from "./JobKindSpec.ts"
import { JsonObject, Text } from "./Json.ts"
import { KindName } from "./JobKind.ts"
import { MAX_MCP_SERVERS, McpServerBody, mcpServerViewOf, McpServerView } from "./McpServers.ts"
import { ToolParameter } from "./ToolSchema.ts"
import type { ToolSchema } from "./ToolSchema.ts"

/** The built-in tools a definition may name. */
export const SubagentToolName = Schema.Literals(["web_search", "fetch_url", "write_demo", "write_svg"])
export type SubagentToolName = typeof SubagentToolName.Type

/** The tool through which every defined sub-agent ends its work. */
export const SUBMIT_RESULT_TOOL = "submit_result"

export const DEFAULT_SUBAGENT_MAX_STEPS = 12
export const MAX_SUBAGENT_STEPS = 50
/** Input parameters a kind may declare at most. */
export const MAX_SUBAGENT_INPUT = 32
/** The longest time limit a kind may set (its own; `JOB_TIMEOUT_MS` is the default). */
export const MAX_SUBAGENT_TIMEOUT_MS = 24 * 60 * 60 * 1000
/** A result schema is sent to the model with every step: bound it. */
export const MAX_RESULT_SCHEMA_CHARS = 16 * 1024

const ResultSchema = JsonObject.check(
  Schema.makeFilter((schema) =>
    JSON.stringify(schema).length <= MAX_RESULT_SCHEMA_CHARS ? undefined : `must be at most ${MAX_RESULT_SCHEMA_CHARS} characters of JSON`
  )
)

const definitionFields = {
  /** What the chat model reads of the job tool. */
  description: Text.check(Schema.isMinLength(1), Schema.isMaxLength(4096)),
  /** The job tool's parameters: the call's arguments are the job's input. */
  input: Schema.Array(ToolParameter).check(Schema.isMaxLength(MAX_SUBAGENT_INPUT)),
  /** The sub-agent's system prompt: `{{input.x}}` is filled from the call's arguments. */
  systemPrompt: Text.check(Schema.isMinLength(1), Schema.isMaxLength(MAX_SYSTEM_PROMPT_CHARS)),
  /** A JSON Schema the object given to `submit_result` must match. */
  result: ResultSchema,
  /** Overrides `LLM_MODEL` for this kind's sub-agents. */
  model: Schema.optionalKey(Text.check(Schema.isMinLength(1), Schema.isMaxLength(200))),
  /** `JOB_TIMEOUT_MS` for this kind: the sub-agent's own working time (a wait for approval is not counted). */
  timeoutMs: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1000, maximum: MAX_SUBAGENT_TIMEOUT_MS })))
}

/** What an operator writes (`PUT /admin/subagents/{kind}`). */
export const SubagentBody = Schema.Struct({
  ...definitionFields,
  tools: Schema.optionalKey(Schema.Array(SubagentToolName).check(Schema.isMaxLength(4))),
  mcpServers: Schema.optionalKey(Schema.Array(McpServerBody).check(Schema.isMaxLength(MAX_MCP_SERVERS))),
  /** Provider calls the sub-agent may make, default 12. */
  maxSteps: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: MAX_SUBAGENT_STEPS })))
})
export type SubagentBody = typeof SubagentBody.Type

/** A kind as the operator sees it (`GET /admin/subagents`): its MCP servers' header names, never their values. */
export const SubagentDefinition = Schema.Struct({
  kind: KindName,
  ...definitionFields,
  tools: Schema.Array(SubagentToolName),
  mcpServers: Schema.optionalKey(Schema.Array(McpServerView)),
  maxSteps: Schema.Int,
  builtIn: Schema.Boolean
})
export type SubagentDefinition = typeof SubagentDefinition.Type

export const SubagentList = Schema.Struct({ subagents: Schema.Array(SubagentDefinition) })
export type SubagentList = typeof SubagentList.Type

/**
 * The stored definition of a new or replaced kind, its optional fields at their defaults.
 * `keptHeaders`: the header names of an MCP server whose headers the body leaves as they were.
 */
export const subagentDefinitionOf = (
  kind: string,
  body: SubagentBody,
  keptHeaders?: (server: McpServerBody) => ReadonlyArray<string> | undefined
): SubagentDefinition => ({
  kind,
  description: body.description,
  input: body.input,
  systemPrompt: body.systemPrompt,
  result: body.result,
  tools: body.tools ?? [],
  ...(body.mcpServers === undefined || body.mcpServers.length === 0
    ? {}
    : { mcpServers: body.mcpServers.map((server) => mcpServerViewOf(server, keptHeaders?.(server))) }),
  ...(body.model === undefined ? {} : { model: body.model }),
  maxSteps: body.maxSteps ?? DEFAULT_SUBAGENT_MAX_STEPS,
  ...(body.timeoutMs === undefined ? {} : { timeoutMs: body.timeoutMs }),
  builtIn: false
})

/** The job tool the chat model is offered for a kind: its name is the kind. */
export const subagentToolOf = (definition: Pick<SubagentDefinition, "kind" | "description" | "input">): ToolSchema => ({
  name: definition.kind,
  description: definition.description,
  parameters: definition.input
})

const INPUT_PLACEHOLDER = /\{\{\s*input\.([A-Za-z0-9_$-]+)\s*\}\}/g

/**
 * The sub-agent's prompt: each `{{input.x}}` replaced by the call's argument — a string as it is,
 * any other value as JSON, a missing one by an empty string. One pass, so an argument that itself
 * reads `{{input.y}}` stays text.
 */
export const fillSubagentPrompt = (template: string, input: Readonly<Record<string, unknown>>): string =>
  template.replace(INPUT_PLACEHOLDER, (_, key: string) => {
    const value = Object.hasOwn(input, key) ? input[key] : undefined
    if (value === undefined || value === null) return ""
    return typeof value === "string" ? value : JSON.stringify(value)
  })

/**
 * Any JSON value as readable text: a string as it is, a list as `- item` lines, an object as
 * `key: value` lines, nested values indented under their key. What the CLI prints of a defined
 * kind's result, and what a steer tells the chat model.
 */
export const readableResult = (value: unknown, indent = ""): string => {
  if (typeof value === "string") return value.includes("\n") ? value.split("\n").map((l) => `${indent}${l}`).join("\n") : `${indent}${value}`
  if (value === null || typeof value !== "object") return `${indent}${JSON.stringify(value)}`
  const entries: Array<[string | undefined, unknown]> = Array.isArray(value)
    ? value.map((item) => [undefined, item])
    : Object.entries(value)
  if (entries.length === 0) return `${indent}${Array.isArray(value) ? "(none)" : "(empty)"}`
  return entries.map(([key, item]) => {
    const label = key === undefined ? "-" : `${key}:`
    const simple = item === null || typeof item !== "object"
    if (simple && !(typeof item === "string" && item.includes("\n"))) {
      return `${indent}${label} ${typeof item === "string" ? item : JSON.stringify(item)}`
    }
    return `${indent}${label}\n${readableResult(item, `${indent}  `)}`
  }).join("\n")
}

/**
 * `value` with its objects' keys in the order `schema`'s `properties` declare them (the others
 * after, as they were), nested objects and arrays' items likewise: what a JSON store that keeps
 * no key order (PostgreSQL's jsonb) lost.
 */
export const inSchemaOrder = (schema: unknown, value: unknown): unknown => {
  const s = typeof schema === "object" && schema !== null ? schema as Record<string, unknown> : {}
  if (Array.isArray(value)) return value.map((item) => inSchemaOrder(s["items"], item))
  if (typeof value !== "object" || value === null) return value
  const properties = typeof s["properties"] === "object" && s["properties"] !== null ? s["properties"] as Record<string, unknown> : {}
  const entries = Object.entries(value as Record<string, unknown>)
  const declared = Object.keys(properties)
  const rank = (key: string) => declared.includes(key) ? declared.indexOf(key) : declared.length
  return Object.fromEntries(
    entries
      .map(([key, inner], index) => ({ key, inner: inSchemaOrder(properties[key], inner), index }))
      .sort((a, b) => rank(a.key) - rank(b.key) || a.index - b.index)
      .map(({ inner, key }) => [key, inner])
  )
}

/** A defined kind's failure shape: the only result with `error` alone (a sub-agent's result is what its schema says). */
const failed = (result: Readonly<Record<string, unknown>>): string | undefined => {
  const keys = Object.keys(result)
  return keys.length === 1 && keys[0] === "error" && typeof result["error"] === "string" ? result["error"] : undefined
}

/**
 * What the domain knows of a defined kind, from its name alone: its input and result are JSON
 * objects (checked against the definition by the server), its failure shape `{ error }`, its steer
 * the result as readable text. The tool is the definition's (`subagentToolOf`); here it is a
 * placeholder naming the kind.
 */
export const definedKindSpec = (kind: string): JobKindSpec<string, JsonObject, JsonObject> => ({
  kind,
  tool: { name: kind, description: "", parameters: [] },
  input: JsonObject,
  result: JsonObject,
  isFailure: (result) => failed(result) !== undefined,
  failure: (_input, reason) => ({ error: reason }),
  failureReason: failed,
  steerText: (result) => {
    const reason = failed(result)
    return reason !== undefined
      ? `The ${kind} sub-agent failed: ${reason}. Go on without its result and tell the user; dispatch ${kind} again only if a better input would help.`
      : `The ${kind} sub-agent finished. Its result follows; use it as the user asked:\n\n${readableResult(result)}`
  }
})
