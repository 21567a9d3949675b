/**
 * A provider adapter that streams its answer in pieces a set time apart, and
 * counts the calls cut short (a stop, a replica stopping): for the streamed
 * turns' tests, which are about the turn, not the wire (the adapters' own
 * streaming is tested against the provider fakes over HTTP).
 */
import type { ProviderChatParams } from "@switchboard/domain"
import { Effect, Exit, Layer, Stream } from "effect"
import { ProviderAdapter, pushEvents, Transcriber } from "@switchboard/providers"
import type { ProviderStreamEvent } from "@switchboard/providers"

/** A provider streaming `pieces` `gapMs` apart, recording whether each call was cut short. */
export const paced = () => {
  const state = {
    pieces: ["Hello", ", ", "world", "."],
    gapMs: 0,
    calls: [] as Array<ProviderChatParams>,
    interrupted: 0,
    toolCall: false,
    /** With `toolCall`: the call's arguments arrive in these pieces, `gapMs` apart, after the text. */
    argPieces: undefined as ReadonlyArray<string> | undefined
  }
  const events = (params: ProviderChatParams): Stream.Stream<ProviderStreamEvent> => {
    state.calls.push(params)
    const content = state.pieces.join("")
    const lastIsTool = params.messages[params.messages.length - 1]?.role === "tool"
    const calls = state.toolCall && !lastIsTool ? [{ id: "call_1", name: "transcribe_video", args: { assetId: "a1" } }] : []
    const deltas = Stream.fromIterable(state.pieces).pipe(
      Stream.mapEffect((delta) => Effect.as(state.gapMs > 0 ? Effect.sleep(state.gapMs) : Effect.void, { type: "text-delta" as const, delta }))
    )
    const callEvents = Stream.fromIterable(calls).pipe(
      Stream.flatMap((c) =>
        Stream.concat(
          Stream.make({ type: "tool-call-start" as const, id: c.id, name: c.name }),
          Stream.fromIterable(state.argPieces ?? [JSON.stringify(c.args)]).pipe(
            Stream.mapEffect((delta) =>
              Effect.as(state.argPieces !== undefined && state.gapMs > 0 ? Effect.sleep(state.gapMs) : Effect.void, { type: "tool-call-delta" as const, id: c.id, delta })
            )
          )
        )
      )
    )
    const finish: ProviderStreamEvent = {
      type: "finish",
      response: { content, ...(calls.length > 0 ? { toolCalls: calls } : {}), usage: { inputTokens: 7, outputTokens: 4 } }
    }
    return Stream.concat(Stream.concat(deltas, callEvents), Stream.make(finish)).pipe(
      Stream.onExit((exit) => Exit.hasInterrupts(exit) ? Effect.sync(() => state.interrupted++) : Effect.void)
    )
  }
  const layer = Layer.mergeAll(
    Layer.succeed(ProviderAdapter, ProviderAdapter.of({
      // Answered whole, after as long as the pieces would have taken to stream.
      chat: (params) =>
        Effect.sync(() => state.calls.push(params)).pipe(
          Effect.andThen(Effect.sleep(state.gapMs * state.pieces.length)),
          Effect.as({ content: state.pieces.join("") }),
          Effect.onInterrupt(() => Effect.sync(() => state.interrupted++))
        ),
      streamTo: (params, sink) => pushEvents(events(params), sink)
    })),
    Layer.succeed(Transcriber, Transcriber.of({ transcribe: () => Effect.succeed("") }))
  )
  return { state, layer }
}

