/**
 * A built-in agent: a definition like any stored one, seeded in code rather
 * than written by an operator (so it cannot be replaced or deleted, and a new
 * release updates it everywhere at once), with what its definition cannot
 * say as data: a prompt built rather than filled, a context decoded by its
 * own schema. The turn never asks which agent it runs: it asks agents/ for
 * the prompt (SystemPrompt.ts) and the context (AgentCheck.ts).
 */
import type { AgentDefinition, InvalidRequest, JsonObject } from "@switchboard/domain"
import type { Effect } from "effect"

export interface BuiltInAgent {
  readonly definition: AgentDefinition
  /** Its system prompt, given the turn's context and what the offered server tools say; absent: the template filled. */
  readonly prompt?: (context: JsonObject | undefined, serverTools: string | undefined) => string
  /** The request's context as it takes it, or a 400 naming the path; absent: the definition's `contextSchema`. */
  readonly context?: (context: JsonObject) => Effect.Effect<JsonObject, InvalidRequest>
}
