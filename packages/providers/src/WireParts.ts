/**
 * What every adapter's wire conversions share: a tool's JSON Schema, a
 * message's text and a tool result's content as a provider is sent them, and
 * the checks an answer's JSON is read with.
 */
import type { ChatMessage, ToolSchema } from "@switchboard/domain"
import { toParametersSchema } from "@switchboard/domain"

/**
 * Built once per parameter list: a turn sends the same tools (its agent's, the job tools) on every
 * provider call, and the lists are the agent's and the kinds' own, never changed.
 */
const builtSchemas = new WeakMap<ReadonlyArray<ToolSchema["parameters"][number]>, Readonly<Record<string, unknown>>>()

/** The arguments' JSON Schema: the tool's own when it brings one, else the one built from `parameters`. */
export const toolInputSchema = (schema: ToolSchema): Readonly<Record<string, unknown>> => {
  if (schema.inputSchema !== undefined) return schema.inputSchema
  let built = builtSchemas.get(schema.parameters)
  if (built === undefined) {
    built = toParametersSchema(schema.parameters)
    builtSchemas.set(schema.parameters, built)
  }
  return built
}

/**
 * The text a provider sees of a message: its `content`, or, when that is empty,
 * the text of its text parts (a client may carry the text only there). Data
 * parts never contribute.
 */
export const providerText = (message: ChatMessage): string => {
  if (message.content !== "" || message.parts === undefined) return message.content
  return message.parts.flatMap((part) => part.type === "text" && "text" in part ? [part.text] : []).join("\n")
}

/** A tool result as the model reads it: `{"error": …}` when the tool failed, else `{"result": …}`. */
export const toolResultContent = (toolResult: NonNullable<ChatMessage["toolResult"]>): string =>
  JSON.stringify(toolResult.error ? { error: toolResult.error } : { result: toolResult.result ?? null })

/** A plain JSON object (not null, not an array). */
export const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** What a JSON value is, for messages: `null`, `an array`, `a string`, … */
export const jsonKind = (u: unknown): string => u === null ? "null" : Array.isArray(u) ? "an array" : `a ${typeof u}`

/** A count of tokens: a whole number, never negative. */
export const isTokenCount = (u: unknown): u is number => typeof u === "number" && Number.isInteger(u) && u >= 0

/**
 * A tool call's arguments. Models do send broken JSON; that is not a failed
 * request but a bad call, which the orchestrator reports back to the model as
 * a tool error. So: `args: {}` plus `invalidArgs` saying what was wrong.
 */
export const parseToolArguments = (raw: unknown): { readonly args: Record<string, unknown>; readonly invalidArgs?: string } => {
  // Some OpenAI-compatible servers send the object itself instead of a JSON string.
  if (isRecord(raw)) return { args: raw }
  if (raw === undefined || raw === null) return { args: {} }
  if (typeof raw !== "string") return { args: {}, invalidArgs: `arguments must be a JSON object, got ${jsonKind(raw)}` }
  if (raw.trim() === "") return { args: {} }
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch (e) {
    return { args: {}, invalidArgs: `arguments are not valid JSON: ${e instanceof Error ? e.message : String(e)}` }
  }
  return isRecord(parsed)
    ? { args: parsed }
    : { args: {}, invalidArgs: `arguments must be a JSON object, got ${jsonKind(parsed)}` }
}
