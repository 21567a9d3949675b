/**
 * A turn's provider rounds as a stream shows them (docs/streaming.md): the
 * chunks published to the turn's `LiveTurn` while the answer arrives, a
 * server tool round's calls with their results, the stream's last chunk, and
 * a stop that ends the provider call.
 */
import type { ChatMessage, ChatResponse, ProviderChatParams, ToolCall } from "@switchboard/domain"
import { maxStoredValueBytes } from "@switchboard/domain"
import { Cause, Effect, Exit, Fiber } from "effect"
import { ProviderError, pushAnswer } from "@switchboard/providers"
import type { ProviderAdapter, StreamSink } from "@switchboard/providers"
import type { LiveTurn } from "../stream/LiveTurn.ts"
import { close, markStarted, publish } from "../stream/LiveTurn.ts"
import { errorText } from "../TurnErrors.ts"
import type { ChatKey } from "../../users/ChatKey.ts"
import { chatIdOf } from "../../users/ChatKey.ts"
import type { RoundAnswer, TurnEnd, TurnOutcome } from "./TurnTypes.ts"

/** A client call a stop cut while its input arrived: what its `tool-input-error` says. */
const CALL_CUT_BY_STOP = "The turn was stopped before this call was complete: it is not stored and not to run"

/**
 * A streamed turn's last chunk: `finish` (with the chat, the usage, whether it was stopped) or the
 * `error` the JSON answer would have carried. A turn interrupted (its replica stopping) ends its
 * stream with an error too: its readers learn it ended rather than wait.
 */
export const endLive = (live: LiveTurn, exit: Exit.Exit<TurnOutcome | ChatResponse, unknown>, chatId: ChatKey | undefined, end: TurnEnd) => {
  if (Exit.isSuccess(exit)) {
    const outcome = exit.value
    // Another agent's chat: nothing ran yet, and the caller runs the turn again as that agent's, on
    // this same stream (`ChatTurns`); whoever holds the stream closes it at the end (`TurnStreams`).
    if ("_tag" in outcome && outcome._tag === "OtherAgent") return
    // A full chat: nothing ran, and the caller refuses the turn (409) before its stream starts.
    if ("_tag" in outcome && outcome._tag === "Full") return
    // A turn that did not run (a deferred or skipped wake) has no stream of its own.
    if ("_tag" in outcome && outcome._tag !== "Answered" && outcome._tag !== "ChatGone") return close(live)
    return publish(live, {
      type: "finish",
      ...(end.stopped ? { finishReason: "other" as const } : {}),
      messageMetadata: {
        ...(chatId === undefined ? {} : { chatId: chatIdOf(chatId) }),
        ...(end.usage === undefined ? {} : { usage: { inputTokens: end.usage.inputTokens, outputTokens: end.usage.outputTokens } }),
        ...(end.stopped ? { stopped: true } : {})
      }
    })
  }
  publish(live, { type: "error", errorText: errorText(exit.cause) })
}

/** Server calls about to run that take a while (an MCP server's): shown first, so a reader sees them running. */
export const publishRunning = (live: LiveTurn, calls: ReadonlyArray<ToolCall>) => {
  for (const call of calls) publish(live, { type: "tool-input-available", toolCallId: call.id, toolName: call.name, input: call.args })
}

/**
 * A server tool round, as the stream shows it: each call with its result (a job's acknowledgement);
 * the calls `shown` already (`publishRunning`) with their result only.
 */
export const publishExecuted = (
  live: LiveTurn,
  calls: ReadonlyArray<ToolCall>,
  results: ReadonlyArray<ChatMessage>,
  shown: ReadonlySet<string> = new Set()
) => {
  for (const call of calls) {
    const result = results.find((m) => m.toolResult?.toolCallId === call.id)?.toolResult
    if (!shown.has(call.id)) publish(live, { type: "tool-input-available", toolCallId: call.id, toolName: call.name, input: call.args })
    publish(live, {
      type: "tool-output-available",
      toolCallId: call.id,
      output: result === undefined ? null : result.error !== undefined ? { error: result.error } : result.result ?? null
    })
  }
  publish(live, { type: "finish-step" })
}

/**
 * Runs a round's provider call until it ends or the turn is stopped, which interrupts it (and so
 * closes the provider's connection): the call in a fiber of its own, which the stop interrupts
 * directly — no watcher fiber, no stage in the stream (measured with `npm run bench`).
 */
const untilStopped = <A, E>(round: Effect.Effect<A, E>, live: LiveTurn) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.forkChild(round, { startImmediately: true })
    const interrupt = () => fiber.interruptUnsafe()
    live.onStop.add(interrupt)
    if (live.stopped) interrupt()
    const exit = yield* Fiber.await(fiber)
    live.onStop.delete(interrupt)
    return exit
  })

/**
 * Publishes a streamed provider call's output as UI chunks while it arrives: text, and the client's
 * tool calls with their argument deltas (a server tool's call is shown once executed, with its
 * acknowledgement). A stop ends the call (its connection closed) with the text so far and no calls.
 * A round whose text outgrows a stored message fails as `TooLarge` at once, not at its end.
 */
export const streamRound = (
  adapter: ProviderAdapter["Service"],
  live: LiveTurn,
  params: ProviderChatParams,
  owns: (name: string) => boolean,
  round: number
): Effect.Effect<RoundAnswer, ProviderError> =>
  Effect.gen(function*() {
    publish(live, { type: "start-step" })
    const textId = `${live.messageId}_text_${round}`
    // The pieces, joined only when a stop makes them the answer (else the adapter's answer has the text):
    // a string grown by `+=` would hold a tree node per delta for as long as the turn streams.
    const pieces: Array<string> = []
    /** The text's UTF-8 bytes (none: no text yet): a stored message is bounded in bytes, and a character may take up to four. */
    let textBytes = 0
    let first = true
    /** The client's calls whose input is streaming, by id: their names. */
    const clientCalls = new Map<string, string>()
    // Called in the network read that brought the pieces (docs/performance.md): no fiber per delta.
    const sink: StreamSink = (deltas) => {
      if (first) {
        first = false
        markStarted(live)
      }
      for (const delta of deltas) {
        switch (delta.type) {
          case "text-delta":
            if (textBytes === 0) publish(live, { type: "text-start", id: textId })
            pieces.push(delta.delta)
            textBytes += Buffer.byteLength(delta.delta, "utf8")
            // Only a stored answer is bounded so (without a chat nothing is stored).
            if (live.chatId !== undefined && textBytes > maxStoredValueBytes) {
              return new ProviderError({ reason: "TooLarge", message: `the answer outgrew the ${maxStoredValueBytes} bytes a stored message holds` })
            }
            publish(live, { type: "text-delta", id: textId, delta: delta.delta })
            break
          case "tool-call-start":
            if (!owns(delta.name)) {
              clientCalls.set(delta.id, delta.name)
              publish(live, { type: "tool-input-start", toolCallId: delta.id, toolName: delta.name })
            }
            break
          case "tool-call-delta":
            if (clientCalls.has(delta.id)) publish(live, { type: "tool-input-delta", toolCallId: delta.id, inputTextDelta: delta.delta })
            break
        }
      }
      return undefined
    }
    const call = live.providerStreams ? adapter.streamTo(params, sink) : pushAnswer(adapter.chat(params), sink)
    const exit = yield* untilStopped(call, live)
    // Interrupted by `stop`: what was read is the answer. Any other failure is the round's.
    if (Exit.isFailure(exit) && !(Cause.hasInterruptsOnly(exit.cause) && live.stopped)) {
      return yield* Effect.failCause(exit.cause)
    }
    // An answer with no piece at all (empty, no calls) starts the stream at its end.
    markStarted(live)
    const response = Exit.isSuccess(exit) ? exit.value : undefined
    if (textBytes !== 0) publish(live, { type: "text-end", id: textId })
    if (response === undefined) {
      // Stopped: the answer stored is the text, without calls; a call whose input had begun says so.
      for (const [toolCallId, toolName] of clientCalls) {
        publish(live, { type: "tool-input-error", toolCallId, toolName, input: {}, errorText: CALL_CUT_BY_STOP })
      }
      return { content: pieces.join(""), stopped: true }
    }
    for (const call of response.toolCalls ?? []) {
      if (!owns(call.name)) publish(live, { type: "tool-input-available", toolCallId: call.id, toolName: call.name, input: call.args })
    }
    return { ...response, stopped: false }
  })
