/**
 * A provider adapter whose answers the test sets, recording every call: for
 * route tests that are about the route, not the wire format.
 */
import type { ProviderChatParams, ProviderChatResponse } from "@switchboard/domain"
import { Effect, Layer } from "effect"
import type { ProviderError, TranscriptionInput } from "../ProviderAdapter.ts"
import { ProviderAdapter, streamOfAnswer, Transcriber } from "../ProviderAdapter.ts"

export type Answer = (params: ProviderChatParams) => Effect.Effect<ProviderChatResponse, ProviderError>

export const makeFakeProvider = () => {
  const calls: Array<ProviderChatParams> = []
  const transcriptions: Array<TranscriptionInput> = []
  let answer: Answer = () => Effect.succeed({ content: "ok" })
  const layer = Layer.mergeAll(
    Layer.succeed(ProviderAdapter, (() => {
      const chat = (params: ProviderChatParams) => Effect.suspend(() => {
        calls.push(params)
        return answer(params)
      })
      return ProviderAdapter.of({ chat, stream: (params) => streamOfAnswer(chat(params)) })
    })()),
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
    }
  }
}
