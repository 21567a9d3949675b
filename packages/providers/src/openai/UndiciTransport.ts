/**
 * The default `ChatCompletionsTransport`: a keep-alive `undici` Pool to the
 * provider's origin (`UndiciPool`, which also maps the failures), posting to
 * `/chat/completions` and `/audio/transcriptions` with a bearer token. The
 * SDK's own request path (fetch) costs several times more CPU per call:
 * `npm run bench` measures the chat route over both transports against a
 * pass-through proxy.
 *
 * The pool lives as long as the layer's scope; it is destroyed (in-flight
 * requests aborted) when the server shuts down.
 */
import { Effect, Layer, Redacted } from "effect"
import type { Scope } from "effect"
import { FormData } from "undici"
import type { ChatCompletionCreateParamsNonStreaming, ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions"
import { ChatCompletionsTransport } from "./ChatCompletionsTransport.ts"
import type { TranscriptionRequest, TransportSettings } from "./ChatCompletionsTransport.ts"
import type { EventSink, StreamDeadline } from "../SseAnswer.ts"
import { endpointUrl, maxResponseBytesOf, secretsOf } from "../ProviderHttp.ts"
import * as UndiciPool from "./UndiciPool.ts"

/**
 * Posting Chat Completions bodies over a pool to the settings' origin, the
 * bearer token in each request's headers (so a pool shared by several keys
 * never holds one).
 */
export const chatSender = (pool: UndiciPool.UndiciPool, settings: TransportSettings) => {
  const chatUrl = endpointUrl(settings.baseUrl, "/chat/completions")
  const headers = {
    authorization: `Bearer ${Redacted.value(settings.apiKey)}`,
    accept: "application/json",
    "content-type": "application/json"
  }
  const secrets = secretsOf(settings)
  return {
    send: (body: ChatCompletionCreateParamsNonStreaming) => pool.post(chatUrl, headers, JSON.stringify(body), secrets),
    stream: (body: ChatCompletionCreateParamsStreaming, deadline: StreamDeadline, onEvents: EventSink) =>
      pool.postStream(chatUrl, headers, JSON.stringify(body), deadline, onEvents, secrets)
  }
}

export const make = (settings: TransportSettings): Effect.Effect<ChatCompletionsTransport["Service"], never, Scope.Scope> =>
  Effect.gen(function*() {
    const chatUrl = endpointUrl(settings.baseUrl, "/chat/completions")
    const transcriptionUrl = endpointUrl(settings.baseUrl, "/audio/transcriptions")

    const pool = yield* UndiciPool.make({
      origin: chatUrl.origin,
      headers: { authorization: `Bearer ${Redacted.value(settings.apiKey)}`, accept: "application/json" },
      secrets: secretsOf(settings),
      maxResponseBytes: maxResponseBytesOf(settings)
    })

    const { send, stream } = chatSender(pool, settings)

    const transcribe = ({ input, model }: TranscriptionRequest) =>
      Effect.suspend(() => {
        const form = new FormData()
        // Copy into a fresh ArrayBuffer-backed view: Blob rejects views over SharedArrayBuffer.
        form.append("file", new Blob([new Uint8Array(input.data)], { type: input.mediaType }), input.fileName)
        form.append("model", model)
        if (input.language !== undefined) form.append("language", input.language)
        // undici sets the multipart content-type (with its boundary) itself.
        return pool.post(transcriptionUrl, {}, form)
      })

    return ChatCompletionsTransport.of({ kind: "undici", send, stream, transcribe })
  })

export const layer = (settings: TransportSettings): Layer.Layer<ChatCompletionsTransport> =>
  Layer.effect(ChatCompletionsTransport, make(settings))
