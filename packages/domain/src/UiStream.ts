/**
 * The streamed turn's wire (docs/streaming.md): the chunks of the AI SDK's UI
 * message stream, protocol v1 — the subset Switchboard sends — and their SSE
 * framing. One schema for the server that writes them and the clients that
 * read them; a chunk of a type not listed here is ignored by our readers, as
 * the AI SDK's own reader tolerates what it does not use.
 */
import { Schema } from "effect"

export const UsageMetadata = Schema.Struct({
  inputTokens: Schema.Finite,
  outputTokens: Schema.Finite
})
export type UsageMetadata = typeof UsageMetadata.Type

/** What a turn's `finish` says of it: its chat, the provider's token usage, whether it was stopped. */
export const FinishMetadata = Schema.Struct({
  chatId: Schema.optionalKey(Schema.String),
  usage: Schema.optionalKey(UsageMetadata),
  stopped: Schema.optionalKey(Schema.Boolean)
})
export type FinishMetadata = typeof FinishMetadata.Type

const chunk = <T extends string, F extends Schema.Struct.Fields>(type: T, fields: F) =>
  Schema.Struct({ type: Schema.Literal(type), ...fields })

export const StartChunk = chunk("start", { messageId: Schema.String })
export const StartStepChunk = chunk("start-step", {})
export const FinishStepChunk = chunk("finish-step", {})
export const TextStartChunk = chunk("text-start", { id: Schema.String })
export const TextDeltaChunk = chunk("text-delta", { id: Schema.String, delta: Schema.String })
export const TextEndChunk = chunk("text-end", { id: Schema.String })
export const ToolInputStartChunk = chunk("tool-input-start", { toolCallId: Schema.String, toolName: Schema.String })
export const ToolInputDeltaChunk = chunk("tool-input-delta", { toolCallId: Schema.String, inputTextDelta: Schema.String })
export const ToolInputAvailableChunk = chunk("tool-input-available", {
  toolCallId: Schema.String,
  toolName: Schema.String,
  input: Schema.Unknown
})
export const ToolOutputAvailableChunk = chunk("tool-output-available", { toolCallId: Schema.String, output: Schema.Unknown })
/** A call whose input never completed (the turn was stopped while it arrived): not stored, not to run. */
export const ToolInputErrorChunk = chunk("tool-input-error", {
  toolCallId: Schema.String,
  toolName: Schema.String,
  input: Schema.Unknown,
  errorText: Schema.String
})
/** After a call's `tool-input-available`: the call waits for the user's decision (docs/tools.md). */
export const ToolApprovalRequestChunk = chunk("tool-approval-request", { approvalId: Schema.String, toolCallId: Schema.String })
/** The user's decision of an approval (a continuation's first chunks say it before the call's output). */
export const ToolApprovalResponseChunk = chunk("tool-approval-response", {
  approvalId: Schema.String,
  approved: Schema.Boolean,
  reason: Schema.optionalKey(Schema.String)
})
/** A call the user denied: it did not run. */
export const ToolOutputDeniedChunk = chunk("tool-output-denied", { toolCallId: Schema.String })
export const FinishReason = Schema.Literals(["stop", "length", "content-filter", "tool-calls", "error", "interrupted", "other"])
export type FinishReason = typeof FinishReason.Type
export const FinishChunk = chunk("finish", {
  finishReason: Schema.optionalKey(FinishReason),
  messageMetadata: Schema.optionalKey(FinishMetadata)
})
export const ErrorChunk = chunk("error", { errorText: Schema.String })

export const UiChunk = Schema.Union([
  StartChunk,
  StartStepChunk,
  FinishStepChunk,
  TextStartChunk,
  TextDeltaChunk,
  TextEndChunk,
  ToolInputStartChunk,
  ToolInputDeltaChunk,
  ToolInputAvailableChunk,
  ToolOutputAvailableChunk,
  ToolInputErrorChunk,
  ToolApprovalRequestChunk,
  ToolApprovalResponseChunk,
  ToolOutputDeniedChunk,
  FinishChunk,
  ErrorChunk
])
export type UiChunk = typeof UiChunk.Type

/** The chunks that end a stream: nothing but `[DONE]` follows one. */
export const isTerminalChunk = (chunk: UiChunk): boolean => chunk.type === "finish" || chunk.type === "error"

/** The response headers of a streamed turn (the contract's; the last one is how the AI SDK knows the protocol). */
export const UI_STREAM_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  "x-vercel-ai-ui-message-stream": "v1",
  // Proxies such as nginx would otherwise hold the deltas back.
  "x-accel-buffering": "no"
}

/**
 * One SSE event carrying a chunk, as one flat string: a running turn keeps every event it sent (for
 * its followers), and an event made by `+` is a tree of three strings until written, then a flat
 * copy behind a tree node (`join` writes the pieces into one string at once).
 */
export const sseEvent = (chunk: UiChunk): string => ["data: ", JSON.stringify(chunk), "\n\n"].join("")

/** The stream's last event. */
export const SSE_DONE = "data: [DONE]\n\n"

/** Sent after 15 s without a chunk, so proxies and clients do not take a quiet turn for a dead one. */
export const SSE_KEEP_ALIVE = ": keep-alive\n\n"

/**
 * Whether a request asked for the streamed answer: its `Accept` names `text/event-stream` with a
 * weight above 0 (`q=0` says "not this one", RFC 9110 §12.4.2).
 */
export const wantsEventStream = (accept: string | undefined): boolean =>
  accept !== undefined && accept.toLowerCase().split(",").some((range) => {
    const [type, ...params] = range.split(";").map((piece) => piece.trim())
    if (type !== "text/event-stream") return false
    const q = params.find((param) => param.startsWith("q="))
    return q === undefined || Number(q.slice(2)) > 0
  })
