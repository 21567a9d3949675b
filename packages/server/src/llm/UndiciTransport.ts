/**
 * The default `ChatCompletionsTransport`: a keep-alive `undici` Pool to the
 * provider's origin. The SDK's own request path (fetch) costs several times
 * more CPU per call: `npm run bench` measures the chat route over both
 * transports against a pass-through proxy.
 *
 * The pool lives as long as the layer's scope; it is destroyed (in-flight
 * requests aborted) when the server shuts down.
 */
import { Effect, Layer, Redacted } from "effect"
import type { Scope } from "effect"
import { FormData, Pool } from "undici"
import type { ChatCompletionCreateParamsNonStreaming } from "openai/resources/chat/completions"
import {
  ChatCompletionsTransport,
  endpointUrl,
  invalidJsonError,
  networkError,
  secretsOf,
  statusError,
  timeoutError
} from "./ChatCompletionsTransport.ts"
import type { TranscriptionRequest, TransportSettings } from "./ChatCompletionsTransport.ts"
import type { ProviderError } from "./ProviderAdapter.ts"
import { describeCause } from "./Redact.ts"

/** Enough sockets for the benchmarked concurrency, with room to spare. */
const CONNECTIONS = 64

// undici's own timers fire as errors; these are the ones that mean "too slow", not "unreachable".
const timeoutCodes = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"])

const failureOf = (cause: unknown, secrets: ReadonlyArray<string>): ProviderError => {
  const code = (cause as { code?: unknown } | null)?.code
  const description = describeCause(cause, secrets)
  return typeof code === "string" && timeoutCodes.has(code) ? timeoutError(description) : networkError(description)
}

export const make = (settings: TransportSettings): Effect.Effect<ChatCompletionsTransport["Service"], never, Scope.Scope> =>
  Effect.gen(function*() {
    const secrets = secretsOf(settings)
    const chatUrl = endpointUrl(settings.baseUrl, "/chat/completions")
    const transcriptionUrl = endpointUrl(settings.baseUrl, "/audio/transcriptions")
    const authorization = `Bearer ${Redacted.value(settings.apiKey)}`

    const pool = yield* Effect.acquireRelease(
      Effect.sync(() =>
        new Pool(chatUrl.origin, {
          connections: CONNECTIONS,
          // The adapter's Effect.timeout (LLM_TIMEOUT_MS) is the only deadline: it aborts the request.
          headersTimeout: 0,
          bodyTimeout: 0
        })
      ),
      (p) => Effect.promise(() => p.destroy())
    )

    /** One POST; the whole body is read either way, so the socket goes back to the pool. */
    const post = (url: URL, headers: Record<string, string>, body: string | FormData) =>
      Effect.tryPromise({
        try: async (signal) => {
          const response = await pool.request({
            method: "POST",
            path: `${url.pathname}${url.search}`,
            headers: { authorization, accept: "application/json", ...headers },
            body,
            signal
          })
          return { status: response.statusCode, text: await response.body.text() }
        },
        catch: (cause) => failureOf(cause, secrets)
      }).pipe(
        Effect.flatMap(({ status, text }) => {
          if (status < 200 || status > 299) return Effect.fail(statusError(status, text, secrets))
          try {
            return Effect.succeed(JSON.parse(text) as unknown)
          } catch {
            return Effect.fail(invalidJsonError(text, secrets))
          }
        })
      )

    const send = (body: ChatCompletionCreateParamsNonStreaming) =>
      post(chatUrl, { "content-type": "application/json" }, JSON.stringify(body))

    const transcribe = ({ input, model }: TranscriptionRequest) =>
      Effect.suspend(() => {
        const form = new FormData()
        // Copy into a fresh ArrayBuffer-backed view: Blob rejects views over SharedArrayBuffer.
        form.append("file", new Blob([new Uint8Array(input.data)], { type: input.mediaType }), input.fileName)
        form.append("model", model)
        if (input.language !== undefined) form.append("language", input.language)
        // undici sets the multipart content-type (with its boundary) itself.
        return post(transcriptionUrl, {}, form)
      })

    return ChatCompletionsTransport.of({ kind: "undici", send, transcribe })
  })

export const layer = (settings: TransportSettings): Layer.Layer<ChatCompletionsTransport> =>
  Layer.effect(ChatCompletionsTransport, make(settings))
