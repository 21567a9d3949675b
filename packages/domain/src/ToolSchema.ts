/**
 * A tool's schema: its name, description and parameters, the one shape the
 * server offers the model, a provider adapter converts to its wire format and
 * a client validates calls against.
 */
import { Schema } from "effect"
import { JsonObject, NonEmptyText, Text } from "./Json.ts"

export const ParameterType = Schema.Literals(["string", "number", "integer", "boolean", "object", "array"])
export type ParameterType = typeof ParameterType.Type

export const ToolParameter = Schema.Struct({
  key: NonEmptyText,
  type: ParameterType,
  required: Schema.Boolean,
  description: Schema.optionalKey(Text),
  /** Allowed values, for `string` parameters. */
  enum: Schema.optionalKey(Schema.Array(Text))
})
export type ToolParameter = typeof ToolParameter.Type

/** What `ToolRegistry.toToolSchemas()` exports and what a provider adapter converts to its wire format. */
export const ToolSchema = Schema.Struct({
  name: NonEmptyText,
  description: Text,
  parameters: Schema.Array(ToolParameter),
  /**
   * A JSON Schema for the arguments, sent to the provider as it is instead of
   * the one built from `parameters` (the planner's tools arrive as JSON Schema).
   */
  inputSchema: Schema.optionalKey(JsonObject)
})
export type ToolSchema = typeof ToolSchema.Type
