/**
 * A streamed turn's chunks (the domain's `UiChunk`, docs/streaming.md) as the
 * answer they add up to: a pure fold. While the turn streams, the fold's state
 * is what a UI shows (the text so far, the tool call whose input is arriving);
 * at the end it is the `ChatResponse` the non-streamed route would have
 * answered: the text deltas concatenated are `content`, the
 * `tool-input-available` calls without a `tool-output-available` are the
 * client's `toolCalls`, and the outputs that acknowledge a dispatched job are
 * its `jobs`. A call's output can only be known at the end of the stream, so
 * nothing is executed before it.
 *
 * `chunksOfResponse` is the fold's inverse: a whole answer as the chunks it
 * stands for, so a server (or a fake) that answers in JSON reads like one
 * that streams.
 */
import { KindName } from "@switchboard/domain"
import type { ChatResponse, DispatchedJob, FinishMetadata, ToolCall, UiChunk, UsageMetadata } from "@switchboard/domain"
import { Schema } from "effect"

/** A tool call as the stream announced it. */
export interface StreamedToolCall {
  readonly toolCallId: string
  readonly toolName: string
  /** The input as its deltas arrived (JSON text, possibly incomplete). */
  readonly inputText: string
}

/** The turn so far. */
export interface TurnProgress {
  /** The id the server stores the assistant message under (`start`); "" before it. */
  readonly messageId: string
  /** The text so far. */
  readonly content: string
  /** The call whose input is arriving (between `tool-input-start` and `tool-input-available`), if any. */
  readonly activeToolCall: StreamedToolCall | null
  /** Every call whose input is complete, in order, with the server's output when it executed the call. */
  readonly calls: ReadonlyArray<{ readonly toolCallId: string; readonly toolName: string; readonly input: unknown }>
  readonly outputs: ReadonlyMap<string, unknown>
  /** The calls that wait for the user's decision (`tool-approval-request`): call id → approval id. */
  readonly approvals: ReadonlyMap<string, string>
  /** `finish` arrived. */
  readonly finished: boolean
  /** The turn was stopped (`finish` said so): its answer is partial and asks for nothing. */
  readonly stopped: boolean
  readonly finishReason?: string | undefined
  readonly usage?: UsageMetadata | undefined
  readonly chatId?: string | undefined
  /** `error` arrived: the server's sentence. The stream ends after it. */
  readonly error?: string | undefined
}

export const emptyProgress: TurnProgress = {
  messageId: "",
  content: "",
  activeToolCall: null,
  calls: [],
  outputs: new Map(),
  approvals: new Map(),
  finished: false,
  stopped: false
}

const finishOf = (progress: TurnProgress, finishReason: string | undefined, metadata: FinishMetadata | undefined): TurnProgress => ({
  ...progress,
  activeToolCall: null,
  finished: true,
  stopped: metadata?.stopped === true,
  finishReason,
  usage: metadata?.usage,
  chatId: metadata?.chatId
})

/** One chunk more. Chunks that say nothing of the answer (`start-step`, `text-start`…) leave it as it is. */
export const foldChunk = (progress: TurnProgress, chunk: UiChunk): TurnProgress => {
  switch (chunk.type) {
    case "start":
      return { ...progress, messageId: chunk.messageId }
    case "text-delta":
      return { ...progress, content: progress.content + chunk.delta }
    case "tool-input-start":
      return { ...progress, activeToolCall: { toolCallId: chunk.toolCallId, toolName: chunk.toolName, inputText: "" } }
    case "tool-input-delta": {
      const active = progress.activeToolCall
      return active === null || active.toolCallId !== chunk.toolCallId
        ? progress
        : { ...progress, activeToolCall: { ...active, inputText: active.inputText + chunk.inputTextDelta } }
    }
    case "tool-input-available": {
      const active = progress.activeToolCall
      return {
        ...progress,
        activeToolCall: active?.toolCallId === chunk.toolCallId ? null : active,
        calls: [...progress.calls, { toolCallId: chunk.toolCallId, toolName: chunk.toolName, input: chunk.input }]
      }
    }
    case "tool-output-available":
      return { ...progress, outputs: new Map(progress.outputs).set(chunk.toolCallId, chunk.output) }
    case "tool-approval-request":
      return { ...progress, approvals: new Map(progress.approvals).set(chunk.toolCallId, chunk.approvalId) }
    case "tool-output-denied":
      // A denied call did not run: what the model reads is the denial.
      return { ...progress, outputs: new Map(progress.outputs).set(chunk.toolCallId, { denied: true }) }
    case "tool-approval-response":
    case "tool-input-error":
      // Its input never completed: nothing to run. (A decision's echo changes nothing either.)
      return chunk.type === "tool-approval-response" ? progress : progress.activeToolCall?.toolCallId === chunk.toolCallId ? { ...progress, activeToolCall: null } : progress
    case "finish":
      return finishOf(progress, chunk.finishReason, chunk.messageMetadata)
    case "error":
      return { ...progress, activeToolCall: null, error: chunk.errorText }
    case "start-step":
    case "finish-step":
    case "text-start":
    case "text-end":
      return progress
  }
}

const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A call's input as `ToolCall.args`; anything but a JSON object is kept as `invalidArgs`, as the JSON route does. */
const toolCallOf = (call: TurnProgress["calls"][number]): ToolCall =>
  isJsonObject(call.input)
    ? { id: call.toolCallId, name: call.toolName, args: call.input }
    : {
      id: call.toolCallId,
      name: call.toolName,
      args: {},
      invalidArgs: typeof call.input === "string" ? call.input : JSON.stringify(call.input) ?? String(call.input)
    }

/** The acknowledgement a server-executed job call answers with. */
const JobAcknowledgement = Schema.Struct({ status: Schema.Literal("dispatched"), jobId: Schema.String, kind: KindName })
const decodeAcknowledgement = Schema.decodeUnknownOption(JobAcknowledgement)

/** The answer the chunks so far add up to. */
export const responseOf = (progress: TurnProgress): ChatResponse => {
  const open = progress.calls.filter((call) => !progress.outputs.has(call.toolCallId))
  const toolCalls = open.filter((call) => !progress.approvals.has(call.toolCallId)).map(toolCallOf)
  const pendingApprovals = open.flatMap((call) => {
    const approvalId = progress.approvals.get(call.toolCallId)
    return approvalId === undefined ? [] : [{ approvalId, toolCallId: call.toolCallId, toolName: call.toolName, input: call.input }]
  })
  const jobs = progress.calls.flatMap((call): ReadonlyArray<DispatchedJob> => {
    const ack = decodeAcknowledgement(progress.outputs.get(call.toolCallId))
    return ack._tag === "Some" ? [{ id: ack.value.jobId, kind: ack.value.kind, toolCallId: call.toolCallId }] : []
  })
  return {
    content: progress.content,
    messageId: progress.messageId,
    ...(toolCalls.length === 0 ? {} : { toolCalls }),
    ...(jobs.length === 0 ? {} : { jobs }),
    ...(pendingApprovals.length === 0 ? {} : { pendingApprovals })
  }
}

/** A whole stream's chunks folded. */
export const foldChunks = (chunks: Iterable<UiChunk>): TurnProgress => {
  let progress = emptyProgress
  for (const chunk of chunks) progress = foldChunk(progress, chunk)
  return progress
}

/**
 * A whole answer as the chunks of one provider round: its text in one delta
 * (when there is any), each client call's input at once, each job as its
 * call and the acknowledgement, then `finish`. `responseOf(foldChunks(…))`
 * gives the answer back.
 */
export const chunksOfResponse = (response: ChatResponse): ReadonlyArray<UiChunk> => {
  const text: ReadonlyArray<UiChunk> = response.content === ""
    ? []
    : [
      { type: "text-start", id: "text_1" },
      { type: "text-delta", id: "text_1", delta: response.content },
      { type: "text-end", id: "text_1" }
    ]
  const calls = (response.toolCalls ?? []).map((call): UiChunk => ({
    type: "tool-input-available",
    toolCallId: call.id,
    toolName: call.name,
    input: call.invalidArgs ?? call.args
  }))
  const jobs = (response.jobs ?? []).flatMap((job): ReadonlyArray<UiChunk> => [
    { type: "tool-input-available", toolCallId: job.toolCallId, toolName: job.kind, input: {} },
    {
      type: "tool-output-available",
      toolCallId: job.toolCallId,
      output: { status: "dispatched", jobId: job.id, kind: job.kind, message: "" }
    }
  ])
  const approvals = (response.pendingApprovals ?? []).flatMap((pending): ReadonlyArray<UiChunk> => [
    { type: "tool-input-available", toolCallId: pending.toolCallId, toolName: pending.toolName, input: pending.input },
    { type: "tool-approval-request", approvalId: pending.approvalId, toolCallId: pending.toolCallId }
  ])
  return [
    { type: "start", messageId: response.messageId },
    { type: "start-step" },
    ...text,
    ...jobs,
    ...calls,
    ...approvals,
    { type: "finish-step" },
    { type: "finish", finishReason: calls.length + approvals.length > 0 ? "tool-calls" : "stop" }
  ]
}
