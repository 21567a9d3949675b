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
import { Array as Arr, Effect, Stream } from "effect"
import type { Scope } from "effect"
import * as Sse from "effect/encoding/Sse"
import { ProviderError } from "./ProviderAdapter.ts"
import { tooLargeError } from "./ProviderHttp.ts"
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

/**
 * The abort signal of a streamed request, for the scope of its stream: the
 * request lives as long as the stream is read, and closing the stream (its
 * end, a failure, the consumer's interruption) aborts it — a no-op once the
 * body has ended, which keeps a finished stream's connection alive.
 */
export const abortOnClose: Effect.Effect<AbortSignal, never, Scope.Scope> = Effect.map(
  Effect.acquireRelease(Effect.sync(() => new AbortController()), (controller) => Effect.sync(() => controller.abort())),
  (controller) => controller.signal
)

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
          const chunks = yield* pull
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
