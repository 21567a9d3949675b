/**
 * The transport under the OpenAI-compatible adapter: it moves an already-built
 * Chat Completions request to `{baseUrl}/chat/completions` (and an upload to
 * `{baseUrl}/audio/transcriptions`) and hands back the parsed JSON answer.
 * It knows nothing of the chat model: `OpenAiWire` builds and reads the bodies.
 *
 * Two implementations, chosen by `LLM_TRANSPORT`: `UndiciTransport` (default;
 * a pooled keep-alive client, ~4× the throughput of the SDK under concurrency)
 * and `SdkTransport` (the `openai` package). Both map failures to the same
 * `ProviderError` reasons, with messages already redacted; the adapter adds
 * the timeout, whose interruption aborts the in-flight request.
 */
import { Context, Redacted } from "effect"
import type { Effect } from "effect"
import type { ChatCompletionCreateParamsNonStreaming } from "openai/resources/chat/completions"
import { ProviderError } from "./ProviderAdapter.ts"
import type { TranscriptionInput } from "./ProviderAdapter.ts"
import { redact, truncate } from "./Redact.ts"

export type TransportKind = "undici" | "sdk"

export const transportKinds: ReadonlyArray<TransportKind> = ["undici", "sdk"]

export interface TransportSettings {
  /** Includes the API version path, e.g. `https://api.openai.com/v1`; no trailing slash needed. */
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted<string>
}

export interface TranscriptionRequest {
  readonly input: TranscriptionInput
  readonly model: string
}

export class ChatCompletionsTransport extends Context.Service<ChatCompletionsTransport, {
  readonly kind: TransportKind
  /** POST the body; succeeds with the decoded JSON of a 2xx answer (not yet validated). */
  send(body: ChatCompletionCreateParamsNonStreaming): Effect.Effect<unknown, ProviderError>
  /** POST the upload as multipart; succeeds with the decoded JSON of a 2xx answer (not yet validated). */
  transcribe(request: TranscriptionRequest): Effect.Effect<unknown, ProviderError>
}>()("switchboard/server/llm/ChatCompletionsTransport") {}

// ---------------------------------------------------------------------------
// Failure helpers shared by both implementations: same reasons, same wording.

/** The secrets a transport's messages must never contain. */
export const secretsOf = (settings: TransportSettings): ReadonlyArray<string> => [Redacted.value(settings.apiKey)]

/** The provider's own explanation from an error body (`{ error: { message } }` or `{ error: "…" }`), else the raw text. */
const errorDetail = (bodyText: string): string => {
  try {
    const parsed: unknown = JSON.parse(bodyText)
    if (typeof parsed === "object" && parsed !== null && "error" in parsed) {
      const error = (parsed as { error: unknown }).error
      if (typeof error === "string") return error
      if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") {
        return error.message
      }
    }
  } catch {
    // not JSON: quote the text itself
  }
  return bodyText.trim()
}

export const statusError = (status: number, bodyText: string, secrets: ReadonlyArray<string>): ProviderError => {
  const detail = errorDetail(bodyText)
  // Redact before truncating, so a cut can never leave half a key behind.
  const quoted = detail === "" ? "" : `: ${truncate(redact(detail, secrets))}`
  return new ProviderError({ reason: "Status", status, message: `Provider answered HTTP ${status}${quoted}` })
}

export const invalidJsonError = (bodyText: string, secrets: ReadonlyArray<string>): ProviderError =>
  new ProviderError({
    reason: "InvalidResponse",
    message: `Provider answered with a body that is not JSON: ${truncate(redact(bodyText.trim(), secrets), 120)}`
  })

export const networkError = (description: string): ProviderError =>
  new ProviderError({ reason: "Network", message: `Provider unreachable: ${description}` })

export const timeoutError = (description: string): ProviderError =>
  new ProviderError({ reason: "Timeout", message: `Provider timed out: ${description}` })

/** `{baseUrl}{path}`, tolerating a trailing slash on the base URL. */
export const endpointUrl = (baseUrl: string, path: string): URL => new URL(`${baseUrl.replace(/\/+$/, "")}${path}`)
