/**
 * A streamed turn read off the wire (docs/streaming.md): the body of the
 * answer — a `ReadableStream` of bytes, as `fetch` gives it in a browser and
 * in Node — as the domain's `UiChunk`s, each as soon as its event is complete.
 *
 * The bytes are decoded with a streaming `TextDecoder` (a character split
 * across two reads is whole again) and cut into events by Effect's SSE parser
 * (`effect/encoding`: LF, CRLF or CR line ends, an end split across reads,
 * comment lines such as `: keep-alive`). Each event's data is one chunk as
 * JSON, up to `[DONE]`. A chunk of a type this client does not know is
 * skipped, as the AI SDK's own reader tolerates what it does not use; one of
 * a known type that does not match its schema is a broken contract.
 */
import { UiChunk } from "@switchboard/domain"
import { Effect, Result, Schema, Stream } from "effect"
import { Sse } from "effect/encoding"
import { ApiContractMismatch, ApiUnexpectedAnswer, ApiUnreachable, rootCause } from "./ApiFailure.ts"

/** The data of the stream's last event. */
export const DONE_DATA = "[DONE]"

export type SseReadError = ApiUnreachable | ApiUnexpectedAnswer | ApiContractMismatch

const knownTypes: ReadonlySet<string> = new Set(UiChunk.members.map((member) => member.fields.type.literal))
const decodeJson = Schema.decodeUnknownResult(Schema.fromJsonString(Schema.Unknown))
const decodeChunk = Schema.decodeUnknownResult(UiChunk)

/** One event's data as a chunk: `undefined` for a type this client does not know. */
export const decodeUiChunk = (data: string): Result.Result<UiChunk | undefined, ApiContractMismatch> => {
  const json = decodeJson(data)
  if (Result.isFailure(json)) return Result.fail(new ApiContractMismatch({ cause: json.failure }))
  const type = typeof json.success === "object" && json.success !== null ? (json.success as { type?: unknown }).type : undefined
  if (typeof type !== "string" || !knownTypes.has(type)) return Result.succeed(undefined)
  const chunk = decodeChunk(json.success)
  return Result.isSuccess(chunk) ? Result.succeed(chunk.success) : Result.fail(new ApiContractMismatch({ cause: chunk.failure }))
}

/**
 * The chunks of an event stream, up to `[DONE]` or the end of the body.
 * `source` names the request in errors (`GET http://…/stream`). Ending the
 * stream early (or interrupting its reader) cancels the body, and with it
 * the connection.
 */
export const readUiChunks = (body: ReadableStream<Uint8Array>, source: string): Stream.Stream<UiChunk, SseReadError> =>
  Stream.fromReadableStream({
    evaluate: () => body,
    onError: (cause) => {
      const root = rootCause(cause)
      return new ApiUnreachable({ message: `the stream of ${source} broke off${root === undefined ? "" : `: ${root}`}`, cause })
    }
  }).pipe(
    Stream.decodeText(),
    Stream.pipeThroughChannelOrFail(Sse.decode()),
    // Our server sends neither an event that large nor a reconnection delay.
    Stream.mapError((error): SseReadError =>
      error._tag === "SseError"
        ? new ApiUnexpectedAnswer({ status: 200, error: `the event stream of ${source} is not the contract's: ${error.message}` })
        : error._tag === "Retry"
        ? new ApiUnexpectedAnswer({ status: 200, error: `the event stream of ${source} asked to reconnect` })
        : error
    ),
    Stream.map((event) => event.data),
    Stream.takeWhile((data) => data !== DONE_DATA),
    Stream.mapEffect((data) => Effect.fromResult(decodeUiChunk(data))),
    Stream.filter((chunk): chunk is UiChunk => chunk !== undefined)
  )
