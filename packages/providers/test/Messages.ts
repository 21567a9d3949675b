/**
 * Small builders and checks shared by the llm tests: chat messages and chat
 * parameters, the JSON Schema every wire format sends for `TranscribeVideo`,
 * and unwrapping the `Result` of a wire parser.
 */
import { assert } from "@effect/vitest"
import { Result } from "effect"
import type { ChatMessage, ProviderChatParams, ToolSchema } from "@switchboard/domain"
import type { ProviderError } from "../src/ProviderAdapter.ts"

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

/** The parameters of `TranscribeVideo` as a closed JSON Schema: the same on every wire (OpenAI's `parameters`, Anthropic's `input_schema`). */
export const transcribeVideoJsonSchema = {
  type: "object",
  properties: {
    assetId: { type: "string", description: "Id of the media asset to transcribe." },
    language: { type: "string", description: "ISO-639-1 code of the spoken language, e.g. \"en\"." }
  },
  required: [],
  additionalProperties: false
}

/** The error of a wire parser's `Result`, failing the test on a success. */
export const failure = (r: Result.Result<unknown, ProviderError>): ProviderError => {
  if (Result.isSuccess(r)) return assert.fail(`expected a failure, got ${JSON.stringify(r.success)}`)
  return r.failure
}

/** The value of a wire parser's `Result`, failing the test on a failure. */
export const success = <A>(r: Result.Result<A, ProviderError>): A => {
  if (Result.isFailure(r)) return assert.fail(`expected a success, got ${r.failure.message}`)
  return r.success
}
