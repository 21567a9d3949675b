/**
 * Tool definitions in the provider-agnostic internal format.
 *
 * A tool's *schema* (name, description, parameter list) is data shared by the
 * server, which offers it to the model, and the client, which validates and
 * executes calls. Its `execute` lives only on the client: the definitions
 * here are what both sides agree on, so they cannot drift apart.
 */
import type { Effect } from "effect"
import { Schema } from "effect"
import type { AgentContext } from "./Chat.ts"
import { JsonObject, NonEmptyText, Text } from "./Json.ts"
import { toolFromSchema } from "./ToolFromSchema.ts"

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

/** What a tool sees besides its arguments. */
export interface ToolContext {
  readonly agentContext: AgentContext | null
}

/**
 * A client-side tool. `execute` may fail or die: the orchestrator turns either
 * into a failed ToolResult and lets the model recover.
 */
export interface ToolDefinition extends ToolSchema {
  readonly execute: (args: Readonly<Record<string, unknown>>, context: ToolContext) => Effect.Effect<unknown, unknown>
}

/**
 * A keyed set of definitions. Registration order is kept, so exported schemas
 * are stable from one request to the next (prompt caching depends on it).
 */
export abstract class DefinitionRegistry<K, V> {
  private readonly definitions = new Map<K, V>()

  protected abstract keyOf(definition: V): K

  register(definition: V): this {
    const key = this.keyOf(definition)
    if (this.definitions.has(key)) throw new Error(`already registered: ${String(key)}`)
    this.definitions.set(key, definition)
    return this
  }

  get(key: K): V | undefined {
    return this.definitions.get(key)
  }

  has(key: K): boolean {
    return this.definitions.has(key)
  }

  getAll(): ReadonlyArray<V> {
    return [...this.definitions.values()]
  }
}

/** The arguments of `transcribe_video`: the one declaration its parameters and JSON Schema are derived from. */
export const TranscribeVideoArgs = Schema.Struct({
  assetId: Schema.optionalKey(Text.annotate({ description: "Id of the media asset to transcribe." })),
  language: Schema.optionalKey(Text.annotate({ description: "ISO-639-1 code of the spoken language, e.g. \"en\"." }))
})
export type TranscribeVideoArgs = typeof TranscribeVideoArgs.Type

/** `transcribe_video`: the one client-side tool of this phase. */
export const TranscribeVideo: ToolSchema = toolFromSchema(
  "transcribe_video",
  "Transcribe the speech in one of the project's media assets (video or audio). " +
    "Without assetId, the first video asset of the project is used. Returns the transcript text.",
  TranscribeVideoArgs
)

/** The schemas of every tool the client executes, in registration order. */
export const clientToolSchemas: ReadonlyArray<ToolSchema> = [TranscribeVideo]
