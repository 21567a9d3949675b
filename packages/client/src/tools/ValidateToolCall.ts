/**
 * Argument validation before a tool runs (docs/chat.md, the orchestrator).
 *
 * Models get arguments wrong; a tool must never see a call its parameter list
 * rules out. A failed validation is not an exception: it becomes the error of
 * the call's `ToolResult`, phrased for the model so it can retry correctly.
 * Checks: a known tool, arguments that were a JSON object, every required
 * parameter present, and every present parameter (required or not) of its
 * declared type and, for string enums, one of the allowed values. Unknown
 * extra keys are tolerated: they harm nothing and strict models rarely send them.
 */
import type { ParameterType, ToolCall, ToolDefinition, ToolParameter } from "@switchboard/domain"

export type ToolCallValidation =
  | { readonly _tag: "Valid"; readonly tool: ToolDefinition; readonly args: Readonly<Record<string, unknown>> }
  | { readonly _tag: "Invalid"; readonly error: string }

/** The JSON type of a value, as a model would name it (every number is a "number"). */
export const jsonTypeOf = (value: unknown): string => {
  if (value === null) return "null"
  if (Array.isArray(value)) return "array"
  return typeof value
}

const hasType = (value: unknown, type: ParameterType): boolean => {
  switch (type) {
    case "string":
      return typeof value === "string"
    case "number":
      return typeof value === "number" && Number.isFinite(value)
    case "integer":
      return typeof value === "number" && Number.isInteger(value)
    case "boolean":
      return typeof value === "boolean"
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value)
    case "array":
      return Array.isArray(value)
  }
}

const checkParameter = (parameter: ToolParameter, value: unknown): string | undefined => {
  if (!hasType(value, parameter.type)) {
    return `Invalid argument "${parameter.key}": expected ${parameter.type}, got ${jsonTypeOf(value)}`
  }
  if (parameter.enum !== undefined && parameter.enum.length > 0 && !parameter.enum.includes(value as string)) {
    return `Invalid argument "${parameter.key}": expected one of ${parameter.enum.map((v) => JSON.stringify(v)).join(", ")}, got ${JSON.stringify(value)}`
  }
  return undefined
}

export const validateToolCall = (call: ToolCall, tool: ToolDefinition | undefined): ToolCallValidation => {
  if (tool === undefined) return { _tag: "Invalid", error: `Unknown tool "${call.name}"` }
  if (call.invalidArgs !== undefined) {
    const sent = call.invalidArgs.length > 200 ? `${call.invalidArgs.slice(0, 200)}…` : call.invalidArgs
    return { _tag: "Invalid", error: `Invalid arguments for "${call.name}": expected a JSON object, got ${sent}` }
  }
  const args: Record<string, unknown> = { ...call.args }
  for (const parameter of tool.parameters) {
    const value = args[parameter.key]
    // Models that fill every declared key (OpenAI strict mode) send null for "not given":
    // for an optional parameter that means absent, and the tool should not see it.
    if (value === undefined || (value === null && !parameter.required)) {
      if (parameter.required) {
        return { _tag: "Invalid", error: `Missing required argument "${parameter.key}" (${parameter.type})` }
      }
      delete args[parameter.key]
      continue
    }
    const error = checkParameter(parameter, value)
    if (error !== undefined) return { _tag: "Invalid", error }
  }
  return { _tag: "Valid", tool, args }
}
