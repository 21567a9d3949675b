/** Small builders for chat messages in the llm tests. */
import type { ChatMessage, ProviderChatParams, ToolSchema } from "@switchboard/domain"

let counter = 0

export const message = (role: ChatMessage["role"], content: string, extra: Partial<ChatMessage> = {}): ChatMessage => ({
  id: `m${++counter}`,
  role,
  content,
  timestamp: 1_700_000_000_000,
  ...extra
})

export const user = (content: string, extra: Partial<ChatMessage> = {}) => message("user", content, extra)

export const assistant = (content: string, extra: Partial<ChatMessage> = {}) => message("assistant", content, extra)

export const toolMessage = (
  toolCallId: string,
  name: string,
  outcome: { readonly result?: unknown; readonly error?: string },
  content = ""
): ChatMessage =>
  message("tool", content, {
    toolResult: {
      toolCallId,
      name,
      ...(outcome.result !== undefined ? { result: outcome.result } : {}),
      ...(outcome.error !== undefined ? { error: outcome.error } : {})
    }
  })

export const params = (
  messages: ReadonlyArray<ChatMessage>,
  toolSchemas: ReadonlyArray<ToolSchema> = [],
  systemPrompt = "You are a test assistant."
): ProviderChatParams => ({ messages, systemPrompt, toolSchemas })
