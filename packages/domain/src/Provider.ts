/**
 * The provider adapter's contract: provider-agnostic parameters in, a
 * provider-agnostic answer out. Every adapter (openai-compatible, scripted, …)
 * converts these to and from its own wire format.
 */
import { Schema } from "effect"
import { ChatMessage, ToolCall } from "./Chat.ts"
import { ToolSchema } from "./Tools.ts"

export const ProviderToolCall = ToolCall
export type ProviderToolCall = ToolCall

export const ProviderChatParams = Schema.Struct({
  messages: Schema.Array(ChatMessage),
  systemPrompt: Schema.String,
  toolSchemas: Schema.Array(ToolSchema)
})
export type ProviderChatParams = typeof ProviderChatParams.Type

export const ProviderChatResponse = Schema.Struct({
  content: Schema.String,
  toolCalls: Schema.optionalKey(Schema.Array(ProviderToolCall))
})
export type ProviderChatResponse = typeof ProviderChatResponse.Type
