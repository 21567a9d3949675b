/**
 * The chat wire model: messages, tool calls and results, the request.
 *
 * These schemas are the single source of truth for the chat route, the
 * transcript store, the provider adapters and the client orchestrator. They
 * are plain structs (not classes) because the client persists them as JSON.
 */
import { Schema } from "effect"
import { AgentName } from "./Agents.ts"
import { KindName } from "./JobKind.ts"
import { JsonObject, JsonValue, NonEmptyText, Text } from "./Json.ts"

export const Role = Schema.Literals(["system", "user", "assistant", "tool"])
export type Role = typeof Role.Type

export const ExecutionState = Schema.Literals(["idle", "sending", "processing", "responding", "error"])
export type ExecutionState = typeof ExecutionState.Type
/** The spec calls the agent store's status type `ExecutionStatus`. */
export type ExecutionStatus = ExecutionState

export const ToolCall = Schema.Struct({
  id: NonEmptyText,
  name: NonEmptyText,
  args: JsonObject,
  /** Set when the provider sent arguments that are not a JSON object; `args` is then `{}`. */
  invalidArgs: Schema.optionalKey(Text)
})
export type ToolCall = typeof ToolCall.Type

export const ToolResult = Schema.Struct({
  toolCallId: NonEmptyText,
  name: NonEmptyText,
  result: Schema.optionalKey(JsonValue),
  error: Schema.optionalKey(Text)
})
export type ToolResult = typeof ToolResult.Type

export const TextPart = Schema.Struct({ type: Schema.Literal("text"), text: Text })
export type TextPart = typeof TextPart.Type

/** UI-only payloads: never sent to a provider. */
export const DataPart = Schema.Struct({
  type: Text.check(Schema.isPattern(/^data-[A-Za-z0-9_-]+$/u, { description: "`data-` then a name of A-Z a-z 0-9 _ -" })),
  data: Schema.optionalKey(JsonValue)
})
export type DataPart = typeof DataPart.Type

export const Part = Schema.Union([TextPart, DataPart])
export type Part = typeof Part.Type

/** The longest message id, in code points. */
export const MAX_MESSAGE_ID = 200

/**
 * Whether `id` is short enough for a message id: counted in code points, as JSON Schema's
 * maxLength is, so the document and the decoder agree. A code point is one or two UTF-16 units, so
 * most ids are settled by their length alone, and a long one is never read whole.
 */
export const fitsMessageId = (id: string): boolean =>
  id.length <= MAX_MESSAGE_ID || (id.length <= 2 * MAX_MESSAGE_ID && [...id].length <= MAX_MESSAGE_ID)

/** A message's id. */
export const MessageId = NonEmptyText.check(
  Schema.makeFilter((id: string) => fitsMessageId(id) ? undefined : `at most ${MAX_MESSAGE_ID} characters`, {
    toJsonSchema: () => ({ maxLength: MAX_MESSAGE_ID })
  })
)

export const ChatMessage = Schema.Struct({
  id: MessageId,
  role: Role,
  content: Text,
  toolCalls: Schema.optionalKey(Schema.Array(ToolCall)),
  /** Carried by `tool` messages. */
  toolResult: Schema.optionalKey(ToolResult),
  parts: Schema.optionalKey(Schema.Array(Part)),
  metadata: Schema.optionalKey(JsonObject),
  /** Epoch milliseconds. */
  timestamp: Schema.Finite
}).check(Schema.makeFilter((m) =>
  m.role === "tool" && m.toolResult === undefined
    ? { path: ["toolResult"], issue: "a tool message must carry toolResult" }
    : undefined, {
  toJsonSchema: () => ({
    description: "A `tool` message carries `toolResult`.",
    if: { properties: { role: { const: "tool" } }, required: ["role"] },
    then: { properties: { toolResult: { description: "Required with role `tool`" } }, required: ["toolResult"] }
  })
}))
export type ChatMessage = typeof ChatMessage.Type

/** Chat ids appear in URLs: keep them to a safe alphabet. */
export const ChatId = Text.check(Schema.isPattern(/^[A-Za-z0-9_.:-]{1,128}$/u, {
  description: "1 to 128 characters of A-Z a-z 0-9 _ . : -"
}))
export type ChatId = typeof ChatId.Type

export const ChatRequest = Schema.Struct({
  messages: Schema.Array(ChatMessage).check(Schema.isMinLength(1)),
  /**
   * What the agent's prompt and tools know of the session: any JSON object, checked against the
   * agent's context schema (the built-in `media-editor`'s is `AgentContext`: a 400 names the path).
   */
  context: Schema.optionalKey(JsonObject),
  chatId: Schema.optionalKey(ChatId),
  /**
   * The agent this turn runs (docs/agents.md); default: the chat's (the agent of its first turn), or
   * the server's default agent for a chat's first turn and for turns without `chatId`.
   */
  agent: Schema.optionalKey(AgentName)
})
export type ChatRequest = typeof ChatRequest.Type

/** A job a turn dispatched (its job tool call was executed by the server). */
export const DispatchedJob = Schema.Struct({
  id: Schema.String,
  kind: KindName,
  /** The provider's id of the job tool call. */
  toolCallId: Schema.String
})
export type DispatchedJob = typeof DispatchedJob.Type

/** A server tool's call waiting for the user's decision (docs/tools.md, approvals). */
export const PendingApproval = Schema.Struct({
  approvalId: Schema.String,
  toolCallId: Schema.String,
  toolName: Schema.String,
  input: JsonValue
})
export type PendingApproval = typeof PendingApproval.Type

export const ChatResponse = Schema.Struct({
  content: Schema.String,
  /** Only calls the client must execute; omitted when there are none. */
  toolCalls: Schema.optionalKey(Schema.Array(ToolCall)),
  /** The id the server gave the assistant message (the persisted one, with `chatId`): reuse it client-side. */
  messageId: Schema.String,
  /**
   * The jobs this turn dispatched (with `chatId` only), oldest first; omitted
   * when none. Their steers arrive later in the transcript.
   */
  jobs: Schema.optionalKey(Schema.Array(DispatchedJob)),
  /**
   * Server tool calls this turn stopped at, waiting for the user's decision (`POST
   * /api/chats/{chatId}/approvals/{approvalId}`); omitted when none.
   */
  pendingApprovals: Schema.optionalKey(Schema.Array(PendingApproval))
})
export type ChatResponse = typeof ChatResponse.Type

export const ChatTranscript = Schema.Struct({ messages: Schema.Array(ChatMessage) })
export type ChatTranscript = typeof ChatTranscript.Type

export const Transcription = Schema.Struct({ text: Schema.String })
export type Transcription = typeof Transcription.Type

/**
 * The conversation as a provider reads it: each tool message right after the assistant message
 * whose call it answers (in the order stored), everything else in its order. A transcript is
 * stored in the order things happened, and a call answered late — an approval decided after the
 * user wrote again — has its answer stored after later messages; providers require the answers
 * of a message's calls to follow it. A transcript already in that order is given back as it is.
 */
export const inCallOrder = (messages: ReadonlyArray<ChatMessage>): ReadonlyArray<ChatMessage> => {
  const callers = new Map<string, number>()
  messages.forEach((m, i) => {
    if (m.role === "assistant") for (const call of m.toolCalls ?? []) callers.set(call.id, i)
  })
  const late = new Map<number, Array<ChatMessage>>()
  let moved = false
  messages.forEach((m, i) => {
    const at = m.toolResult === undefined ? undefined : callers.get(m.toolResult.toolCallId)
    if (at === undefined || at > i) return
    // Only a tool message separated from its call by a message that is not an answer moves.
    const between = messages.slice(at + 1, i)
    if (between.every((b) => b.role === "tool")) return
    moved = true
    late.set(at, [...(late.get(at) ?? []), m])
  })
  if (!moved) return messages
  const movedSet = new Set([...late.values()].flat())
  const ordered: Array<ChatMessage> = []
  /** The late answers of the last assistant message: put after the answers that follow it. */
  let waiting: ReadonlyArray<ChatMessage> = []
  messages.forEach((m, i) => {
    if (movedSet.has(m)) return
    if (m.role !== "tool") {
      ordered.push(...waiting)
      waiting = late.get(i) ?? []
    }
    ordered.push(m)
  })
  ordered.push(...waiting)
  return ordered
}
