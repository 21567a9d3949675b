/**
 * A provider adapter whose answers the test sets, recording every call: for
 * route tests that are about the route, not the wire format.
 *
 * `streamTo` pushes the `answerWith` answer in one batch (`pushAnswer`)
 * unless the test scripts the stream itself with `streamWith` (deltas,
 * pauses, a failure midway, a stream that never ends):
 *
 * ```ts
 * fake.streamWith(() => Stream.make(
 *   { type: "text-delta", delta: "Hel" },
 *   { type: "text-delta", delta: "lo" },
 *   { type: "finish", response: { content: "Hello" } }
 * ).pipe(Stream.tap(() => Effect.sleep("10 millis"))))
 * ```
 *
 * Both kinds of call are recorded in `calls`, in order.
 */
import type { ProviderChatParams, ProviderChatResponse } from "@switchboard/domain"
import { Effect, Layer, Stream } from "effect"
import type { ProviderError, ProviderStreamEvent, TranscriptionInput } from "../ProviderAdapter.ts"
import { ProviderAdapter, pushAnswer, pushEvents, Transcriber } from "../ProviderAdapter.ts"

export type Answer = (params: ProviderChatParams) => Effect.Effect<ProviderChatResponse, ProviderError>

export type Streamer = (params: ProviderChatParams) => Stream.Stream<ProviderStreamEvent, ProviderError>

export const makeFakeProvider = () => {
  const calls: Array<ProviderChatParams> = []
  const transcriptions: Array<TranscriptionInput> = []
  let answer: Answer = () => Effect.succeed({ content: "ok" })
  let streamer: Streamer | undefined
  const layer = Layer.mergeAll(
    Layer.succeed(ProviderAdapter, ProviderAdapter.of({
      chat: (params) =>
        Effect.suspend(() => {
          calls.push(params)
          return answer(params)
        }),
      streamTo: (params, sink) =>
        Effect.suspend(() => {
          calls.push(params)
          return streamer === undefined ? pushAnswer(answer(params), sink) : pushEvents(streamer(params), sink)
        })
    })),
    Layer.succeed(Transcriber, Transcriber.of({
      transcribe: (input) => Effect.sync(() => {
        transcriptions.push(input)
        return `transcript of ${input.fileName} (${input.data.byteLength} bytes)`
      })
    }))
  )
  return {
    layer,
    calls,
    transcriptions,
    answerWith: (f: Answer) => {
      answer = f
    },
    /** Scripts `stream` itself; `undefined` goes back to streaming the `answerWith` answer. */
    streamWith: (f: Streamer | undefined) => {
      streamer = f
    }
  }
}
