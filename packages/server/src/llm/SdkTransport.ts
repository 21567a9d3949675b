/**
 * The `openai` SDK as a `ChatCompletionsTransport` (`LLM_TRANSPORT=sdk`).
 * Slower than the pooled undici transport under concurrency, but it is the
 * reference client: useful to rule the transport out when a provider behaves
 * oddly. SDK retries are off (`maxRetries: 0`): one chat call is one request,
 * and retrying is the caller's decision.
 */
import { Effect, Layer, Redacted } from "effect"
import OpenAI, { toFile } from "openai"
import type { ChatCompletionCreateParamsNonStreaming } from "openai/resources/chat/completions"
import { ChatCompletionsTransport } from "./ChatCompletionsTransport.ts"
import type { TranscriptionRequest, TransportSettings } from "./ChatCompletionsTransport.ts"
import type { ProviderError } from "./ProviderAdapter.ts"
import { invalidJsonError, networkError, secretsOf, statusError, timeoutError } from "./ProviderHttp.ts"
import { describeCause } from "./Redact.ts"

const failureOf = (cause: unknown, secrets: ReadonlyArray<string>): ProviderError => {
  // Order matters: the timeout and connection errors are APIErrors without a status.
  if (cause instanceof OpenAI.APIConnectionTimeoutError) return timeoutError(describeCause(cause, secrets))
  if (cause instanceof OpenAI.APIConnectionError) return networkError(describeCause(cause, secrets))
  if (cause instanceof OpenAI.APIError && cause.status !== undefined) {
    // `error` is the body's `error` field when the body was JSON; otherwise the message holds the text.
    const body = cause.error !== undefined
      ? JSON.stringify({ error: cause.error })
      : cause.message.replace(new RegExp(`^${cause.status}\\s*`), "")
    return statusError(cause.status, body, secrets)
  }
  // A 2xx answer labelled JSON that does not parse.
  if (cause instanceof SyntaxError) return invalidJsonError(cause.message, secrets)
  // Anything else failed while talking to the server (e.g. fetch's "terminated" mid-body).
  return networkError(describeCause(cause, secrets))
}

export const make = (settings: TransportSettings): ChatCompletionsTransport["Service"] => {
  const secrets = secretsOf(settings)
  const client = new OpenAI({ apiKey: Redacted.value(settings.apiKey), baseURL: settings.baseUrl, maxRetries: 0 })

  const send = (body: ChatCompletionCreateParamsNonStreaming) =>
    Effect.tryPromise({
      // The signal aborts the HTTP request when the adapter's timeout interrupts this fiber.
      try: (signal) => client.chat.completions.create(body, { signal }) as PromiseLike<unknown>,
      catch: (cause) => failureOf(cause, secrets)
    })

  const transcribe = ({ input, model }: TranscriptionRequest) =>
    Effect.tryPromise({
      try: async (signal) =>
        client.audio.transcriptions.create({
          file: await toFile(input.data, input.fileName, { type: input.mediaType }),
          model,
          ...(input.language !== undefined ? { language: input.language } : {})
        }, { signal }) as PromiseLike<unknown>,
      catch: (cause) => failureOf(cause, secrets)
    })

  return ChatCompletionsTransport.of({ kind: "sdk", send, transcribe })
}

export const layer = (settings: TransportSettings): Layer.Layer<ChatCompletionsTransport> =>
  Layer.sync(ChatCompletionsTransport, () => make(settings))
