/**
 * Reading a provider's streamed answer into the port's events
 * (`ProviderStreamEvent`), whichever API it speaks: each API's reader
 * (`openai/CompletionChunks.ts`, `anthropic/MessageEvents.ts`) turns one wire
 * event into stream events and says when the answer is complete; this module
 * runs it, so that every adapter keeps the port's promise alike:
 *
 * - `finish` comes once, last, and only for a complete answer: a body that
 *   ends before the API's end marker fails `InvalidResponse`, one cut
 *   mid-transfer fails `Network` (the transport's error), and neither ever
 *   yields a `finish`;
 * - once the answer is complete, what follows on the wire is not read as
 *   answer (a late error included), but the body is still read to its end so
 *   that a kept-alive connection can serve the next call;
 * - the deadline (`LLM_TIMEOUT_MS`) bounds the whole call, first byte to
 *   `finish`: the transports put it on the request itself (`streamSignal`),
 *   which the deadline aborts, as any consumer's interruption does.
 *
 * The pieces go to the consumer's sink in the network read that brought them
 * (`StreamSink`): this runs inside that read's callback, not in a fiber.
 */
import { Effect, Result } from "effect"
import type { ProviderChatResponse } from "@switchboard/domain"
import { ProviderError } from "./ProviderAdapter.ts"
import type { ProviderDelta, StreamSink } from "./ProviderAdapter.ts"
import { redact, truncate } from "./Redact.ts"
import type { EventSink, SseEvent } from "./SseAnswer.ts"

export interface AnswerReader {
  /** One wire event: the stream events it yields (often none), or why the answer cannot be read. */
  read(event: SseEvent): Result.Result<ReadonlyArray<ProviderDelta>, ProviderError>
  /** The API's end marker has been read: nothing after it is answer. */
  complete(): boolean
  /** At the end of the body: the whole answer, or why there is none (it is incomplete, or invalid). */
  end(): Result.Result<ProviderChatResponse, ProviderError>
}

/**
 * A streamed answer read with a fresh reader: `read` is the transport's call, given where to hand
 * the wire events; their pieces go to `sink`, and the result is the whole answer.
 */
export const readAnswer = (
  read: (onEvents: EventSink) => Effect.Effect<void, ProviderError>,
  makeReader: () => AnswerReader,
  sink: StreamSink
): Effect.Effect<ProviderChatResponse, ProviderError> =>
  Effect.suspend(() => {
    const reader = makeReader()
    /** The consumer's refusal of a piece: the call's failure whatever the wire did after it. */
    let refused: ProviderError | undefined
    const onEvents: EventSink = (events) => {
      const out: Array<ProviderDelta> = []
      let failure: ProviderError | undefined
      for (const event of events) {
        if (reader.complete()) break
        const read = reader.read(event)
        if (Result.isFailure(read)) {
          if (!reader.complete()) failure = read.failure
          break
        }
        for (const delta of read.success) out.push(delta)
      }
      // The pieces read before a failure still go out, then the failure ends the call.
      if (out.length > 0) refused = sink(out)
      return refused ?? failure
    }
    return read(onEvents).pipe(
      // After the answer's end marker, whatever the connection does is no concern of the answer.
      Effect.catchIf((_: ProviderError) => refused === undefined && reader.complete(), () => Effect.void),
      Effect.flatMap(() => refused !== undefined ? Effect.fail(refused) : Effect.fromResult(reader.end()))
    )
  })

/** The body ended before the API's end marker. */
export const incompleteError = (what: string): ProviderError =>
  new ProviderError({ reason: "InvalidResponse", message: `Provider stream ended before the ${what}` })

/** A wire event that is not what the API sends. */
export const invalidEventError = (detail: string, secrets: ReadonlyArray<string>): ProviderError =>
  new ProviderError({ reason: "InvalidResponse", message: `Invalid stream event: ${truncate(redact(detail, secrets), 200)}` })

/**
 * An error the provider reported inside a stream it had started with a 2xx:
 * `Status` with the HTTP status the same error would have had before the
 * stream (so it gets the same public reason, e.g. `status_529`), or
 * `InvalidResponse` when the API gives no such status.
 */
export const streamedError = (detail: string, status: number | undefined, secrets: ReadonlyArray<string>): ProviderError => {
  const message = `Provider stream reported an error: ${truncate(redact(detail.trim(), secrets))}`
  return status === undefined
    ? new ProviderError({ reason: "InvalidResponse", message })
    : new ProviderError({ reason: "Status", status, message })
}

/** A reader's JSON parse of one event's data, or why it is not JSON. */
export const parseEventData = (event: SseEvent, secrets: ReadonlyArray<string>): Result.Result<unknown, ProviderError> => {
  try {
    return Result.succeed(JSON.parse(event.data) as unknown)
  } catch {
    return Result.fail(invalidEventError(`data that is not JSON: ${event.data}`, secrets))
  }
}
