/**
 * The `openai` SDK as a `ChatCompletionsTransport` (`LLM_TRANSPORT=sdk`).
 * Slower than the pooled undici transport under concurrency, but it is the
 * reference client: useful to rule the transport out when a provider behaves
 * oddly. SDK retries are off (`maxRetries: 0`): one chat call is one request,
 * and retrying is the caller's decision.
 *
 * The SDK reads whole bodies itself, so its `fetch` is one that hands it a
 * body cut off at `LLM_MAX_RESPONSE_BYTES` (`boundedFetch`).
 */
import { Effect, Layer, Redacted, Stream } from "effect"
import OpenAI, { toFile } from "openai"
import type { ChatCompletionCreateParamsNonStreaming, ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions"
import { ChatCompletionsTransport } from "./ChatCompletionsTransport.ts"
import type { TranscriptionRequest, TransportSettings } from "./ChatCompletionsTransport.ts"
import type { ProviderError } from "../ProviderAdapter.ts"
import {
  declaredTooLarge,
  ERROR_BODY_BYTES,
  errorCodeOf,
  invalidJsonError,
  maxResponseBytesOf,
  networkError,
  secretsOf,
  statusError,
  timeoutError,
  tooLargeError
} from "../ProviderHttp.ts"
import { describeCause } from "../Redact.ts"
import { EVENT_STREAM, failureWithin, isEventStream, notAnEventStreamError, pumpStream, settled, sseBytes, streamSignal } from "../SseAnswer.ts"
import type { EventSink, StreamDeadline } from "../SseAnswer.ts"

/** Thrown into the SDK's read of a 2xx body past the bound; found again in `failureOf`. */
class AnswerTooLarge extends Error {
  readonly maxBytes: number
  constructor(maxBytes: number) {
    super(`answer larger than ${maxBytes} bytes`)
    this.maxBytes = maxBytes
  }
}

const tooLargeIn = (cause: unknown): AnswerTooLarge | undefined => {
  let current: unknown = cause
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof AnswerTooLarge) return current
    current = current.cause
  }
  return undefined
}


/**
 * `fetch`, with each answer's body bounded as it streams: a 2xx body past
 * `maxBytes` fails the SDK's read with `AnswerTooLarge`, an error body is cut
 * short quietly (its status is what matters); either way the transfer is
 * cancelled at that point, so the rest is never received.
 */
export const boundedFetch = (maxBytes: number) => async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const response = await fetch(input, init)
  if (response.body === null) return response
  const bound = response.ok ? maxBytes : Math.min(maxBytes, ERROR_BODY_BYTES)
  if (response.ok && declaredTooLarge(response.headers.get("content-length"), maxBytes)) {
    await response.body.cancel()
    throw new AnswerTooLarge(maxBytes)
  }
  let total = 0
  const limited = response.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      if (total + chunk.byteLength <= bound) {
        total += chunk.byteLength
        controller.enqueue(chunk)
        return
      }
      // Either way the source is cancelled (the pipe's default), which aborts the transfer.
      if (response.ok) return controller.error(new AnswerTooLarge(maxBytes))
      controller.enqueue(chunk.subarray(0, bound - total))
      total = bound
      controller.terminate()
    }
  }))
  // The length, if any, no longer describes the body handed on.
  const headers = new Headers(response.headers)
  headers.delete("content-length")
  return new Response(limited, { status: response.status, statusText: response.statusText, headers })
}

const failureOf = (cause: unknown, secrets: ReadonlyArray<string>): ProviderError => {
  const tooLarge = tooLargeIn(cause)
  if (tooLarge !== undefined) return tooLargeError(tooLarge.maxBytes)
  // Order matters: the timeout and connection errors are APIErrors without a status.
  if (cause instanceof OpenAI.APIConnectionTimeoutError) return timeoutError(describeCause(cause, secrets))
  if (cause instanceof OpenAI.APIConnectionError) return networkError(describeCause(cause, secrets), errorCodeOf(cause))
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
  return networkError(describeCause(cause, secrets), errorCodeOf(cause))
}

export const make = (settings: TransportSettings): ChatCompletionsTransport["Service"] => {
  const secrets = secretsOf(settings)
  const maxBytes = maxResponseBytesOf(settings)
  const client = new OpenAI({
    apiKey: Redacted.value(settings.apiKey),
    baseURL: settings.baseUrl,
    maxRetries: 0,
    fetch: boundedFetch(maxBytes)
  })

  const send = (body: ChatCompletionCreateParamsNonStreaming) =>
    Effect.tryPromise({
      // The signal aborts the HTTP request when the adapter's timeout interrupts this fiber.
      try: (signal) => client.chat.completions.create(body, { signal }) as PromiseLike<unknown>,
      catch: (cause) => failureOf(cause, secrets)
    })

  // The SDK's own stream reader would hide how the body ended ([DONE] or not): the events are read
  // from its raw response, as the undici transport reads them.
  const stream = (body: ChatCompletionCreateParamsStreaming, deadline: StreamDeadline, onEvents: EventSink) =>
    Effect.scoped(Effect.gen(function*() {
      const signal = yield* streamSignal(deadline)
      const failure = failureWithin(signal, deadline, (cause) => failureOf(cause, secrets))
      const response = yield* Effect.tryPromise({
        try: () => client.chat.completions.create(body, { signal: signal.signal, headers: { accept: EVENT_STREAM } }).asResponse(),
        catch: failure
      })
      const contentType = response.headers.get("content-type")
      if (response.body !== null && isEventStream(contentType)) {
        const events = response.body
        const bytes = Stream.fromReadableStream({ evaluate: () => events, onError: failure })
        return yield* pumpStream(bytes, sseBytes(maxBytes, onEvents)).pipe(Effect.andThen(settled))
      }
      const text = yield* Effect.tryPromise({ try: () => response.text(), catch: failure })
      return yield* Effect.fail(notAnEventStreamError(contentType ?? "", text, secrets))
    }))

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

  return ChatCompletionsTransport.of({ kind: "sdk", send, stream, transcribe })
}

export const layer = (settings: TransportSettings): Layer.Layer<ChatCompletionsTransport> =>
  Layer.sync(ChatCompletionsTransport, () => make(settings))
