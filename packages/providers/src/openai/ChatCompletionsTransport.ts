/**
 * The transport under the OpenAI-compatible adapter: it moves an already-built
 * Chat Completions request to `{baseUrl}/chat/completions` (and an upload to
 * `{baseUrl}/audio/transcriptions`) and hands back the parsed JSON answer.
 * Asked to, it streams the answer instead (`stream`: its server-sent events).
 * It knows nothing of the chat model: `OpenAiWire` builds and reads the bodies.
 *
 * Two implementations, chosen by `LLM_TRANSPORT`: `UndiciTransport` (default;
 * a pooled keep-alive client, ~4× the throughput of the SDK under concurrency)
 * and `SdkTransport` (the `openai` package). Both map failures to the same
 * `ProviderError` reasons (the helpers of `ProviderHttp`), with messages
 * already redacted; the adapter adds the timeout, whose interruption aborts
 * the in-flight request.
 */
import { Context } from "effect"
import type { Effect, Redacted } from "effect"
import type { ChatCompletionCreateParamsNonStreaming, ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions"
import type { ProviderError, TranscriptionInput } from "../ProviderAdapter.ts"
import type { EventSink, StreamDeadline } from "../SseAnswer.ts"

export type TransportKind = "undici" | "sdk"

export const transportKinds: ReadonlyArray<TransportKind> = ["undici", "sdk"]

export interface TransportSettings {
  /** Includes the API version path, e.g. `https://api.openai.com/v1`; no trailing slash needed. */
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted<string>
  /** `LLM_MAX_RESPONSE_BYTES` (default 4 MiB): the most read of one answer. */
  readonly maxResponseBytes?: number
}

export interface TranscriptionRequest {
  readonly input: TranscriptionInput
  readonly model: string
}

export class ChatCompletionsTransport extends Context.Service<ChatCompletionsTransport, {
  readonly kind: TransportKind
  /** POST the body; succeeds with the decoded JSON of a 2xx answer (not yet validated). */
  send(body: ChatCompletionCreateParamsNonStreaming): Effect.Effect<unknown, ProviderError>
  /**
   * POST the streaming body; the answer's server-sent events to `onEvents` as they arrive (not yet
   * read as chunks), succeeding at the body's end. `Status` before the stream, `TooLarge` past the
   * bound, `Timeout` past the deadline, the failure `onEvents` returns; each of those, and
   * interrupting the call, aborts the request (its connection closed).
   */
  stream(body: ChatCompletionCreateParamsStreaming, deadline: StreamDeadline, onEvents: EventSink): Effect.Effect<void, ProviderError>
  /** POST the upload as multipart; succeeds with the decoded JSON of a 2xx answer (not yet validated). */
  transcribe(request: TranscriptionRequest): Effect.Effect<unknown, ProviderError>
}>()("switchboard/providers/ChatCompletionsTransport") {}
