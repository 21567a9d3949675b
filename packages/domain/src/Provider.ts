/**
 * The provider adapter's contract: provider-agnostic parameters in, a
 * provider-agnostic answer out. Every adapter (openai-compatible, anthropic,
 * scripted) converts these to and from its own wire format.
 *
 * Besides the chat route, two callers share the port: the planner proxy (one
 * decision per request: a screenshot, tools given as JSON Schema, exactly one
 * tool call asked for) and the sub-agents (each with its own model). Their
 * needs are the optional fields below; the chat route sets none of them.
 */
import { Schema } from "effect"
import { ChatMessage, ToolCall } from "./Chat.ts"
import { ToolSchema } from "./ToolSchema.ts"

export const ProviderToolCall = ToolCall
export type ProviderToolCall = ToolCall

/** The image types both provider APIs accept as input. */
export const ImageMediaType = Schema.Literals(["image/png", "image/jpeg", "image/gif", "image/webp"])
export type ImageMediaType = typeof ImageMediaType.Type

/** An image input, base64-encoded (no `data:` prefix). */
export const ProviderImage = Schema.Struct({
  mediaType: ImageMediaType,
  data: Schema.String
})
export type ProviderImage = typeof ProviderImage.Type

/**
 * `auto`: the model may answer in text or call any number of tools (the
 * default). `required`: exactly one tool call is asked for (OpenAI
 * `tool_choice: "required"` without parallel calls, Anthropic `tool_choice:
 * any` with `disable_parallel_tool_use`). The adapter still returns whatever
 * the provider answered: checking that it is one call is the caller's job.
 */
export const ToolChoice = Schema.Literals(["auto", "required"])
export type ToolChoice = typeof ToolChoice.Type

export const ProviderChatParams = Schema.Struct({
  messages: Schema.Array(ChatMessage),
  systemPrompt: Schema.String,
  toolSchemas: Schema.Array(ToolSchema),
  /** Overrides the adapter's configured model for this call (a sub-agent's `modelFor(role)`). */
  model: Schema.optionalKey(Schema.String),
  /** Images shown with the last user message (a planner screenshot, a rendered figure). */
  images: Schema.optionalKey(Schema.Array(ProviderImage)),
  toolChoice: Schema.optionalKey(ToolChoice)
})
export type ProviderChatParams = typeof ProviderChatParams.Type

/** Tokens one provider call used, as the provider reported them. */
export const ProviderUsage = Schema.Struct({
  inputTokens: Schema.Finite,
  outputTokens: Schema.Finite,
  cachedInputTokens: Schema.optionalKey(Schema.Finite)
})
export type ProviderUsage = typeof ProviderUsage.Type

export const ProviderChatResponse = Schema.Struct({
  content: Schema.String,
  toolCalls: Schema.optionalKey(Schema.Array(ProviderToolCall)),
  /** When the provider reported it. */
  usage: Schema.optionalKey(ProviderUsage)
})
export type ProviderChatResponse = typeof ProviderChatResponse.Type
