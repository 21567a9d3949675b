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
import { Array as Arr, Cause, Effect, Exit, Pull, Stream } from "effect"
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

/**
 * The bytes of a Node readable (an HTTP response body), one step per batch
 * of what arrived: everything buffered is taken at once, and the step waits
 * on the readable's own events — no promise per chunk, as an async iterator
 * would make. The readable is destroyed when the stream closes early.
 */
const ignore = () => {}

/**
 * A turn of the event loop. The HTTP clients emit a body's end before they hand its connection
 * back to their pool; a stream that ended at once would have its next call (the next round of the
 * turn) open a new connection (the conformance tests assert the kept-alive one is reused).
 */
const settled: Effect.Effect<void> = Effect.callback<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

export const readableBytes = (
  readable: Readable,
  onError: (cause: unknown) => ProviderError
): Stream.Stream<Uint8Array, ProviderError> =>
  Stream.scoped(Stream.fromPull(Effect.acquireRelease(
    Effect.sync(() => {
      let ended = false
      let failure: unknown = undefined
      let failed = false
      let waiting: ((pull: Pull.Pull<Arr.NonEmptyReadonlyArray<Uint8Array>, ProviderError>) => void) | undefined
      /** What a pull gets now, if anything: the buffered chunks, the failure, or the end. */
      const take = (): Pull.Pull<Arr.NonEmptyReadonlyArray<Uint8Array>, ProviderError> | undefined => {
        const chunks: Array<Uint8Array> = []
        for (let chunk = readable.read() as Uint8Array | null; chunk !== null; chunk = readable.read() as Uint8Array | null) {
          chunks.push(chunk)
        }
        if (Arr.isArrayNonEmpty(chunks)) return Effect.succeed(chunks)
        if (failed) return Effect.fail(onError(failure))
        if (ended) return Cause.done()
        return undefined
      }
      const wake = () => {
        if (waiting === undefined) return
        const next = take()
        if (next === undefined) return
        const resume = waiting
        waiting = undefined
        resume(next)
      }
      const onEnd = () => {
        ended = true
        wake()
      }
      const onFailure = (cause: unknown) => {
        failed = true
        failure = cause
        wake()
      }
      readable.on("readable", wake)
      readable.on("end", onEnd)
      readable.on("error", onFailure)
      const pull: Pull.Pull<Arr.NonEmptyReadonlyArray<Uint8Array>, ProviderError> = Effect.suspend(() =>
        take() ?? Effect.callback<Arr.NonEmptyReadonlyArray<Uint8Array>, ProviderError | Cause.Done>((resume) => {
          waiting = (next) => resume(next)
          return Effect.sync(() => {
            waiting = undefined
          })
        })
      )
      const release = () => {
        readable.off("readable", wake)
        readable.off("end", onEnd)
        readable.off("error", onFailure)
        // A late error (the abort that follows) has no one to tell: it must not be an unhandled 'error'.
        readable.on("error", ignore)
        // Closed before its end (the consumer went away): the transfer is not wanted.
        if (!ended) readable.destroy()
      }
      return { pull, release }
    }),
    ({ release }) => Effect.sync(release)
  ).pipe(Effect.map(({ pull }) => pull))))

/** A 2xx answer to a streaming request that is not a stream (a server that ignored `stream: true`, a proxy's page). */
export const notAnEventStreamError = (contentType: string, bodyText: string, secrets: ReadonlyArray<string>): ProviderError =>
  new ProviderError({
    reason: "InvalidResponse",
    message: `Provider answered ${contentType}, not an event stream: ${truncate(redact(bodyText.trim(), secrets), 120)}`
  })

/**
 * The events of a body, in order. Past `maxBytes` of body the stream fails
 * `TooLarge`, and ending it is the transport's cue to abort the transfer. A
 * last event the body does not terminate (no blank line) is not an event: a
 * cut body loses it, as the SSE specification says.
 */
export const sseEvents = (bytes: Stream.Stream<Uint8Array, ProviderError>, maxBytes: number): Stream.Stream<SseEvent, ProviderError> =>
  Stream.suspend(() => {
    const decoder = new TextDecoder()
    let received = 0
    let parsed: Array<SseEvent> = []
    // `Retry` (a `retry:` field) is for browsers reconnecting: nothing here reconnects.
    const parser = Sse.makeParser((event) => event._tag === "Event" && parsed.push(event), { maxEventSize: maxBytes })
    // One step per network read, however many events it carried (none, when an event is cut in two).
    return Stream.transformPull(bytes, (pull) =>
      Effect.succeed(Effect.gen(function*() {
        for (;;) {
          const chunks = yield* Pull.catchDone(pull, () => Effect.andThen(settled, Cause.done()))
          for (const chunk of chunks) {
            received += chunk.byteLength
            if (received > maxBytes || parser.feed(decoder.decode(chunk, { stream: true })) !== undefined) {
              return yield* Effect.fail(tooLargeError(maxBytes, "stream"))
            }
          }
          const out = parsed
          parsed = []
          if (Arr.isArrayNonEmpty(out)) return out
        }
      })))
  })
