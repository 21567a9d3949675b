/**
 * The `anthropic` provider: the Anthropic Messages API at
 * `{LLM_BASE_URL}/messages` (default base `https://api.anthropic.com/v1`).
 *
 * A thin composition, like `OpenAiCompatible`: `AnthropicWire` builds and
 * reads the bodies (`MessageEvents` a streamed answer's events), an
 * `UndiciPool` moves them (keep-alive, failures mapped to the same
 * `ProviderError` reasons, messages redacted), and this module adds the
 * credentials, the API version and the deadline (`LLM_TIMEOUT_MS`, the whole
 * call, streamed or not), whose interruption aborts the request in flight.
 *
 * Anthropic has no transcription endpoint: the `Transcriber` of this provider
 * fails every call with `NotConfigured` (the route's 502
 * `provider_not_configured`), naming no variable, since none would fix it.
 */
import { Effect, Layer, Redacted } from "effect"
import { traced } from "@switchboard/domain"
import type { ProviderChatParams } from "@switchboard/domain"
import { buildMessagesRequest, buildMessagesStreamRequest, parseMessage } from "./AnthropicWire.ts"
import { messageEventsReader } from "./MessageEvents.ts"
import { ProviderAdapter, ProviderError, Transcriber } from "../ProviderAdapter.ts"
import type { StreamSink } from "../ProviderAdapter.ts"
import { endpointUrl, maxResponseBytesOf, secretsOf, withDeadline } from "../ProviderHttp.ts"
import * as UndiciPool from "../openai/UndiciPool.ts"
import { readAnswer } from "../StreamedAnswer.ts"

export const DEFAULT_BASE_URL = "https://api.anthropic.com/v1"
export const DEFAULT_MAX_TOKENS = 4096
/** The `anthropic-version` header: the API version the wire format of `AnthropicWire` follows. */
export const API_VERSION = "2023-06-01"

export interface AnthropicSettings {
  readonly model: string
  /** Includes `/v1`, like the OpenAI base URL. */
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted<string>
  readonly timeoutMs: number
  /** `max_tokens` of every request (required by the API): `LLM_MAX_TOKENS`. */
  readonly maxTokens: number
  /** `LLM_MAX_RESPONSE_BYTES` (default 4 MiB): the most read of one answer. */
  readonly maxResponseBytes?: number
}

export const transcriptionNotSupported = (): ProviderError =>
  new ProviderError({
    reason: "NotConfigured",
    missing: [],
    message: "transcription is not supported by the anthropic provider"
  })

/** Every request's headers: the credential goes with the request, not into the pool. */
export const requestHeaders = (apiKey: Redacted.Redacted<string>): Record<string, string> => ({
  "x-api-key": Redacted.value(apiKey),
  "anthropic-version": API_VERSION,
  accept: "application/json",
  "content-type": "application/json"
})

/** What every call of these settings sends to: the URL, the headers, the body's options, and the secrets to redact. */
const endpointOf = (settings: AnthropicSettings) => ({
  messagesUrl: endpointUrl(settings.baseUrl, "/messages"),
  headers: requestHeaders(settings.apiKey),
  secrets: secretsOf(settings),
  options: { model: settings.model, maxTokens: settings.maxTokens }
})

/** `chat` over a pool to the settings' origin: build the body, post it within the deadline, read the message. */
export const chatOver = (pool: UndiciPool.UndiciPool, settings: AnthropicSettings) => {
  const { headers, messagesUrl, options, secrets } = endpointOf(settings)
  return (params: ProviderChatParams) =>
    pool.post(messagesUrl, headers, JSON.stringify(buildMessagesRequest(params, options)), secrets).pipe(
      withDeadline(settings.timeoutMs, "message"),
      Effect.flatMap((body) => Effect.fromResult(parseMessage(body))),
      traced("Anthropic.chat", () => ({ attributes: { model: params.model ?? settings.model } }))
    )
}

/** `streamTo` over a pool: the streaming body posted, its events read into the port's pieces, the whole call within the deadline. */
export const streamOver = (pool: UndiciPool.UndiciPool, settings: AnthropicSettings) => {
  const { headers, messagesUrl, options, secrets } = endpointOf(settings)
  const deadline = { timeoutMs: settings.timeoutMs, what: "message stream" }
  return (params: ProviderChatParams, sink: StreamSink) =>
    readAnswer(
      (onEvents) =>
        pool.postStream(messagesUrl, headers, JSON.stringify(buildMessagesStreamRequest(params, options)), deadline, onEvents, secrets),
      () => messageEventsReader(secrets),
      sink
    ).pipe(
      traced("Anthropic.stream", () => ({ attributes: { model: params.model ?? settings.model } }))
    )
}

const adapterLayer = (settings: AnthropicSettings): Layer.Layer<ProviderAdapter> =>
  Layer.effect(
    ProviderAdapter,
    Effect.gen(function*() {
      const pool = yield* UndiciPool.make({
        origin: endpointUrl(settings.baseUrl, "/messages").origin,
        headers: {},
        secrets: secretsOf(settings),
        maxResponseBytes: maxResponseBytesOf(settings)
      })
      return ProviderAdapter.of({ chat: chatOver(pool, settings), streamTo: streamOver(pool, settings) })
    })
  )

const transcriberLayer: Layer.Layer<Transcriber> = Layer.succeed(
  Transcriber,
  Transcriber.of({ transcribe: () => Effect.fail(transcriptionNotSupported()) })
)

/** Both services: chat over the Messages API, transcription refused. */
export const layer = (settings: AnthropicSettings): Layer.Layer<ProviderAdapter | Transcriber> =>
  Layer.mergeAll(adapterLayer(settings), transcriberLayer)
