/**
 * A provider's streamed answer on the wire, whichever API sends it (Chat
 * Completions and Messages both use Server-Sent Events): the bytes of a 2xx
 * body read as events, bounded like a whole answer (`LLM_MAX_RESPONSE_BYTES`
 * counts the stream's bytes, not one event's), and what a transport says when
 * a 2xx body is not an event stream at all.
 *
 * The transports own the request (and its abort); the adapters read the
 * events (`StreamedAnswer`). This module is the part between, shared by both.
 */
import { Effect, Exit, Stream } from "effect"
import type { Scope } from "effect"
import type { Readable } from "node:stream"
import * as Sse from "effect/encoding/Sse"
import { ProviderError } from "./ProviderAdapter.ts"
import { timeoutError, tooLargeError } from "./ProviderHttp.ts"
import { redact, truncate } from "./Redact.ts"

export type SseEvent = Sse.Event

/** The `accept` a streaming request sends. */
export const EVENT_STREAM = "text/event-stream"

/**
 * Whether a 2xx answer's content type is an event stream. An absent one is
 * given the benefit of the doubt: the events (or their absence) decide.
 */
export const isEventStream = (contentType: string | null | undefined): boolean =>
  contentType === undefined || contentType === null || contentType === "" || contentType.toLowerCase().includes(EVENT_STREAM)

/** How long a streamed call may take, first byte to its end (`LLM_TIMEOUT_MS`), and what to call it in the error. */
export interface StreamDeadline {
  readonly timeoutMs: number
  readonly what: string
}

export interface StreamSignal {
  readonly signal: AbortSignal
  /** Whether the deadline aborted the request: its failure is then `Timeout`, whatever the client made of the abort. */
  readonly timedOut: () => boolean
}

/**
 * The abort signal of a streamed request, for the scope of its stream: the
 * request lives as long as the stream is read, and a stream closed by a
 * failure or the consumer's interruption aborts it (its connection closed;
 * a finished stream's stays alive for the next call). Past the
 * deadline the signal aborts too, and the stream fails `Timeout`: a timer
 * on the request rather than a stage racing every event (`npm run bench`
 * measured such a stage as a good part of a streamed delta's CPU).
 */
export const streamSignal = (deadline: StreamDeadline): Effect.Effect<StreamSignal, never, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => {
        const controller = new AbortController()
        let timedOut = false
        const timer = setTimeout(() => {
          timedOut = true
          controller.abort(timeoutError(`${deadline.what} not complete within ${deadline.timeoutMs} ms`))
        }, deadline.timeoutMs)
        return { controller, timer, timedOut: () => timedOut }
      }),
      ({ controller, timer }, exit) =>
        Effect.sync(() => {
          clearTimeout(timer)
          // A stream that ended well has read its body to the end: aborting then, as undici is still
          // handing the socket back, could cost the kept-alive connection. An early close of a body
          // still arriving destroys it where it is read (`readableBytes`, the web stream's cancel).
          if (Exit.isFailure(exit)) controller.abort()
        })
    ),
    ({ controller, timedOut }) => ({ signal: controller.signal, timedOut })
  )

/** A streamed request's failure: `Timeout` when its deadline aborted it, else what the transport makes of it. */
export const failureWithin = (
  signal: StreamSignal,
  deadline: StreamDeadline,
  failureOf: (cause: unknown) => ProviderError
) =>
(cause: unknown): ProviderError =>
  signal.timedOut() ? timeoutError(`${deadline.what} not complete within ${deadline.timeoutMs} ms`) : failureOf(cause)

const ignore = () => {}

/**
 * A turn of the event loop. The HTTP clients emit a body's end before they hand its connection
 * back to their pool; a call that ended at once would have its next call (the next round of the
 * turn) open a new connection (the conformance tests assert the kept-alive one is reused).
 */
export const settled: Effect.Effect<void> = Effect.callback<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/** What a streamed body's bytes are handed to, as they arrive: a failure returned stops the reading. */
export type ByteSink = (chunk: Uint8Array) => ProviderError | undefined

/** What a streamed answer's events are handed to, each network read's in one call: a failure returned stops the reading. */
export type EventSink = (events: ReadonlyArray<SseEvent>) => ProviderError | undefined

/**
 * Reads a Node readable (an HTTP response body) to its end, each chunk handed to `onChunk` in the
 * `data` event that brought it: no fiber resumed, no promise made per chunk. A failure `onChunk`
 * returns, or the consumer's interruption, destroys the readable (the transfer is not wanted).
 */
export const pumpReadable = (
  readable: Readable,
  onChunk: ByteSink,
  onError: (cause: unknown) => ProviderError
): Effect.Effect<void, ProviderError> =>
  Effect.callback<void, ProviderError>((resume) => {
    let done = false
    const detach = () => {
      readable.off("data", onData)
      readable.off("end", onEnd)
      readable.off("error", onFailure)
      readable.off("close", onClose)
      // A late error (the abort that follows) has no one to tell: it must not be an unhandled 'error'.
      readable.on("error", ignore)
    }
    const finish = (exit: Effect.Effect<void, ProviderError>) => {
      if (done) return
      done = true
      detach()
      resume(exit)
    }
    const onData = (chunk: Uint8Array) => {
      let failure: ProviderError | undefined
      try {
        failure = onChunk(chunk)
      } catch (defect) {
        // Thrown in an event handler it would end the process: it is the call's defect instead.
        readable.destroy()
        return finish(Effect.die(defect))
      }
      if (failure === undefined) return
      // Destroyed before the consumer resumes: its 'close' and 'error' come on a later tick, unheard.
      readable.destroy()
      finish(Effect.fail(failure))
    }
    const onEnd = () => finish(Effect.void)
    const onFailure = (cause: unknown) => finish(Effect.fail(onError(cause)))
    const onClose = () => finish(Effect.fail(onError(new Error("the body was closed before its end"))))
    // A body that failed before anyone listened says so in no event to come.
    if (readable.destroyed) {
      done = true
      resume(Effect.fail(onError(readable.errored ?? new Error("the body was closed before it was read"))))
      return
    }
    readable.on("data", onData)
    readable.on("end", onEnd)
    readable.on("error", onFailure)
    readable.on("close", onClose)
    return Effect.sync(() => {
      if (done) return
      done = true
      detach()
      readable.destroy()
    })
  })

/** Reads a stream of bytes (a web body, the SDK's) to its end, each array of chunks handed to `onChunk`. */
export const pumpStream = (bytes: Stream.Stream<Uint8Array, ProviderError>, onChunk: ByteSink): Effect.Effect<void, ProviderError> =>
  Stream.runForEachArray(bytes, (chunks) => {
    for (const chunk of chunks) {
      const failure = onChunk(chunk)
      if (failure !== undefined) return Effect.fail(failure)
    }
    return Effect.void
  })

/** A 2xx answer to a streaming request that is not a stream (a server that ignored `stream: true`, a proxy's page). */
export const notAnEventStreamError = (contentType: string, bodyText: string, secrets: ReadonlyArray<string>): ProviderError =>
  new ProviderError({
    reason: "InvalidResponse",
    message: `Provider answered ${contentType}, not an event stream: ${truncate(redact(bodyText.trim(), secrets), 120)}`
  })

/**
 * The bytes of a body read as events, in order, handed to `onEvents` as each read completes some.
 * Past `maxBytes` of body the reading fails `TooLarge`, and ending it is the transport's cue to
 * abort the transfer. A last event the body does not terminate (no blank line) is not an event: a
 * cut body loses it, as the SSE specification says.
 */
export const sseBytes = (maxBytes: number, onEvents: EventSink): ByteSink => {
  const decoder = new TextDecoder()
  let received = 0
  let parsed: Array<SseEvent> = []
  // `Retry` (a `retry:` field) is for browsers reconnecting: nothing here reconnects.
  const parser = Sse.makeParser((event) => event._tag === "Event" && parsed.push(event), { maxEventSize: maxBytes })
  return (chunk) => {
    received += chunk.byteLength
    if (received > maxBytes || parser.feed(decoder.decode(chunk, { stream: true })) !== undefined) {
      return tooLargeError(maxBytes, "stream")
    }
    if (parsed.length === 0) return undefined
    const events = parsed
    parsed = []
    return onEvents(events)
  }
}
