/**
 * The provider adapter port (docs/chat.md): one method,
 * `chat(params)`, over provider-agnostic parameters. Concrete adapters
 * (openai-compatible, anthropic, scripted) are Layers of this service, chosen
 * by configuration in `ProviderConfig.ts`.
 */
import { Context, Data } from "effect"
import type { Effect } from "effect"
import type { ProviderChatParams, ProviderChatResponse } from "@switchboard/domain"

/**
 * Why a provider call failed. `NotConfigured` is the operator's to fix (502
 * naming what is missing); every other reason is the provider's (502 "LLM
 * provider error", with the cause logged server-side, secrets redacted).
 */
export type ProviderErrorReason = "NotConfigured" | "Network" | "Timeout" | "Status" | "InvalidResponse"

export class ProviderError extends Data.TaggedError("ProviderError")<{
  readonly reason: ProviderErrorReason
  /** For logs only: already free of secrets. */
  readonly message: string
  readonly status?: number
  /** With `NotConfigured`: the environment variables that are missing or invalid. */
  readonly missing?: ReadonlyArray<string>
}> {}

export class ProviderAdapter extends Context.Service<ProviderAdapter, {
  chat(params: ProviderChatParams): Effect.Effect<ProviderChatResponse, ProviderError>
}>()("switchboard/server/llm/ProviderAdapter") {}

/** A media file to transcribe, as uploaded by the client. */
export interface TranscriptionInput {
  readonly data: Uint8Array
  readonly fileName: string
  readonly mediaType: string
  readonly language?: string
}

/** The server half of `transcribe_video`: the configured provider's transcription endpoint. */
export class Transcriber extends Context.Service<Transcriber, {
  transcribe(input: TranscriptionInput): Effect.Effect<string, ProviderError>
}>()("switchboard/server/llm/Transcriber") {}
