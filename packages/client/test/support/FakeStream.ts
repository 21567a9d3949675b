/**
 * Streamed turns for the fakes: a turn's chunks as the server sends them
 * (docs/streaming.md), their SSE framing, and a gate a test opens to let a
 * held stream go on.
 */
import { SSE_DONE, SSE_KEEP_ALIVE, sseEvent } from "@switchboard/domain"
import type { DispatchedJob, JsonObject, UiChunk } from "@switchboard/domain"
import type { Reply } from "./FakeServer.ts"

export interface TurnScript {
  readonly messageId: string
  /** The text, as the deltas it arrives in. */
  readonly deltas?: ReadonlyArray<string>
  /** Client tool calls: their input arrives in two deltas, then whole. */
  readonly toolCalls?: ReadonlyArray<{ readonly id: string; readonly name: string; readonly args: JsonObject }>
  /** Server-executed job calls: the call, then the acknowledgement. */
  readonly jobs?: ReadonlyArray<DispatchedJob>
  readonly stopped?: boolean
  readonly chatId?: string
}

/** The chunks of one turn of one provider round. */
export const turnChunks = (turn: TurnScript): ReadonlyArray<UiChunk> => {
  const deltas = turn.deltas ?? []
  const text: ReadonlyArray<UiChunk> = deltas.length === 0 ? [] : [
    { type: "text-start", id: "t1" },
    ...deltas.map((delta): UiChunk => ({ type: "text-delta", id: "t1", delta })),
    { type: "text-end", id: "t1" }
  ]
  const calls = (turn.toolCalls ?? []).flatMap((call): ReadonlyArray<UiChunk> => {
    const input = JSON.stringify(call.args)
    const half = Math.floor(input.length / 2)
    return [
      { type: "tool-input-start", toolCallId: call.id, toolName: call.name },
      { type: "tool-input-delta", toolCallId: call.id, inputTextDelta: input.slice(0, half) },
      { type: "tool-input-delta", toolCallId: call.id, inputTextDelta: input.slice(half) },
      { type: "tool-input-available", toolCallId: call.id, toolName: call.name, input: call.args }
    ]
  })
  const jobs = (turn.jobs ?? []).flatMap((job): ReadonlyArray<UiChunk> => [
    { type: "tool-input-available", toolCallId: job.toolCallId, toolName: job.kind, input: { query: "q" } },
    {
      type: "tool-output-available",
      toolCallId: job.toolCallId,
      output: { status: "dispatched", jobId: job.id, kind: job.kind, message: `${job.kind} job dispatched` }
    }
  ])
  return [
    { type: "start", messageId: turn.messageId },
    { type: "start-step" },
    ...text,
    ...jobs,
    ...calls,
    { type: "finish-step" },
    {
      type: "finish",
      finishReason: calls.length > 0 ? "tool-calls" : "stop",
      messageMetadata: {
        ...(turn.chatId === undefined ? {} : { chatId: turn.chatId }),
        usage: { inputTokens: 10, outputTokens: 5 },
        ...(turn.stopped === true ? { stopped: true } : {})
      }
    }
  ]
}

/** A whole event stream: each chunk an event, a keep-alive comment among them, `[DONE]` last. */
export const sseText = (chunks: ReadonlyArray<UiChunk>): string =>
  [SSE_KEEP_ALIVE, ...chunks.map(sseEvent), SSE_DONE].join("")

/** The reply streaming `chunks`, one event per write. */
export const streamedReply = (chunks: ReadonlyArray<UiChunk>): Reply => ({
  events: [SSE_KEEP_ALIVE, ...chunks.map(sseEvent), SSE_DONE]
})

/** A gate a held stream waits at; `open` lets it go on. */
export const gate = () => {
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  return { open, opened }
}

/** Resolves once `condition` holds (polled; for what a test cannot await directly). */
export const until = async (condition: () => boolean): Promise<void> => {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5))
}
