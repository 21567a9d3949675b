/**
 * Tool definitions in the provider-agnostic internal format.
 *
 * A tool's *schema* (name, description, parameter list) is data shared by the
 * server, which offers it to the model, and the client, which validates and
 * executes calls. Its `execute` lives only on the client: the definitions
 * here are what both sides agree on, so they cannot drift apart.
 */
import type { Effect } from "effect"
import type { JsonObject } from "./Json.ts"
import type { ToolSchema } from "./ToolSchema.ts"

/** What a tool sees besides its arguments. */
export interface ToolContext {
  /** The turn's context, as its agent's context schema took it (the media editor's: an `AgentContext`). */
  readonly agentContext: JsonObject | null
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

