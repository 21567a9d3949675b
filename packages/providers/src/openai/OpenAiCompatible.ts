/**
 * The `openai-compatible` provider: the Chat Completions API at
 * `{LLM_BASE_URL}/chat/completions` (OpenAI itself, or any server speaking its
 * dialect: vLLM, Ollama, LiteLLM, …) and its `/audio/transcriptions` endpoint.
 *
 * It is a thin composition: `OpenAiWire` builds and reads the bodies (and
 * `CompletionChunks` a streamed answer's chunks), a `ChatCompletionsTransport`
 * moves them, and this module adds the deadline (`LLM_TIMEOUT_MS`, the whole
 * call, streamed or not), whose interruption aborts the request in flight.
 */
import { Effect, Layer } from "effect"
import type { Redacted } from "effect"
import { traced } from "@switchboard/domain"
import type { ProviderChatParams } from "@switchboard/domain"
import { ChatCompletionsTransport } from "./ChatCompletionsTransport.ts"
import type { TransportKind } from "./ChatCompletionsTransport.ts"
import { completionChunksReader } from "./CompletionChunks.ts"
import { buildChatRequest, buildChatStreamRequest, parseChatCompletion, parseTranscription } from "./OpenAiWire.ts"
import { ProviderAdapter, Transcriber } from "../ProviderAdapter.ts"
import type { StreamSink, TranscriptionInput } from "../ProviderAdapter.ts"
import { secretsOf, withDeadline } from "../ProviderHttp.ts"
import { readAnswer } from "../StreamedAnswer.ts"
import * as UndiciTransport from "./UndiciTransport.ts"

export const DEFAULT_BASE_URL = "https://api.openai.com/v1"
export const DEFAULT_TIMEOUT_MS = 60_000
export const DEFAULT_TRANSCRIPTION_MODEL = "whisper-1"

export interface OpenAiCompatibleSettings {
  readonly model: string
  /** Includes `/v1`, as the SDK's `baseURL` does. */
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted<string>
  readonly timeoutMs: number
  readonly transport: TransportKind
  readonly transcriptionModel: string
  /** `LLM_MAX_RESPONSE_BYTES` (default 4 MiB): the most read of one answer. */
  readonly maxResponseBytes?: number
}

/** `chat` over a transport's `send`: build the body, send it within the deadline, read the completion. */
export const chatVia = (
  send: ChatCompletionsTransport["Service"]["send"],
  settings: Pick<OpenAiCompatibleSettings, "model" | "timeoutMs">,
  transport: TransportKind
) =>
(params: ProviderChatParams) =>
  send(buildChatRequest(params, settings.model)).pipe(
    withDeadline(settings.timeoutMs, "chat completion"),
    Effect.flatMap((body) => Effect.fromResult(parseChatCompletion(body))),
    traced("OpenAiCompatible.chat", () => ({ attributes: { model: params.model ?? settings.model, transport } }))
  )

/** `streamTo` over a transport's `stream`: the streaming body, its chunks read into pieces, the whole call within the deadline. */
export const streamVia = (
  stream: ChatCompletionsTransport["Service"]["stream"],
  settings: Pick<OpenAiCompatibleSettings, "model" | "timeoutMs" | "apiKey">,
  transport: TransportKind
) => {
  const secrets = secretsOf(settings)
  const deadline = { timeoutMs: settings.timeoutMs, what: "chat completion stream" }
  return (params: ProviderChatParams, sink: StreamSink) =>
    readAnswer(
      (onEvents) => stream(buildChatStreamRequest(params, settings.model), deadline, onEvents),
      () => completionChunksReader(secrets),
      sink
    ).pipe(
      traced("OpenAiCompatible.stream", () => ({ attributes: { model: params.model ?? settings.model, transport } }))
    )
}

/** Both services over whichever transport is in context. */
export const layerNoDeps = (
  settings: OpenAiCompatibleSettings
): Layer.Layer<ProviderAdapter | Transcriber, never, ChatCompletionsTransport> => {
  const adapter = Layer.effect(
    ProviderAdapter,
    Effect.gen(function*() {
      const transport = yield* ChatCompletionsTransport
      return ProviderAdapter.of({
        chat: chatVia(transport.send, settings, transport.kind),
        streamTo: streamVia(transport.stream, settings, transport.kind)
      })
    })
  )
  const transcriber = Layer.effect(
    Transcriber,
    Effect.gen(function*() {
      const transport = yield* ChatCompletionsTransport
      return Transcriber.of({
        transcribe: (input: TranscriptionInput) =>
          transport.transcribe({ input, model: settings.transcriptionModel }).pipe(
            withDeadline(settings.timeoutMs, "transcription"),
            Effect.flatMap((body) => Effect.fromResult(parseTranscription(body))),
            traced("OpenAiCompatible.transcribe", () => ({
              attributes: { model: settings.transcriptionModel, transport: transport.kind }
            }))
          )
      })
    })
  )
  return Layer.mergeAll(adapter, transcriber)
}

/**
 * The transport named by `settings.transport`. The SDK is imported only when
 * chosen: loading the `openai` package costs the server ~7 MB of memory.
 */
export const layerTransport = (settings: OpenAiCompatibleSettings): Layer.Layer<ChatCompletionsTransport> =>
  settings.transport === "sdk"
    ? Layer.unwrap(Effect.promise(() => import("./SdkTransport.ts")).pipe(Effect.map((sdk) => sdk.layer(settings))))
    : UndiciTransport.layer(settings)

export const layer = (settings: OpenAiCompatibleSettings): Layer.Layer<ProviderAdapter | Transcriber> =>
  layerNoDeps(settings).pipe(Layer.provide(layerTransport(settings)))
