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
import { Text } from "./Json.ts"
import { toolFromSchema } from "./ToolFromSchema.ts"
import type { ToolSchema } from "./ToolSchema.ts"

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
