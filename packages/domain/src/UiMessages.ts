/**
 * The AI SDK's `UIMessage` and Switchboard's transcript (docs/streaming.md, "UIMessage ↔ transcript").
 *
 * The AI SDK's clients (`useChat`, `DefaultChatTransport`) hold a conversation
 * as UIMessages: one message per turn of a role, its text, tool calls and data
 * in `parts`, tool results folded into the tool part that called them. The
 * transcript is ChatMessages: a `tool` message per result. This module is the
 * one mapping between the two, pure and browser-safe: the schemas of the
 * subset Switchboard accepts and produces (what `POST /api/ui/chat` decodes,
 * what `GET /api/chats/{chatId}/ui-messages` answers), `toUiMessages` and
 * `fromUiMessages`.
 *
 * One UIMessage per stored message. A turn of several provider rounds is
 * stored as one assistant message per round (tool results between them);
 * merging the rounds into one UIMessage, as the AI SDK does for a multi-step
 * answer, would leave the later rounds without an id of their own, so the
 * mapping could not give them back and a client sending its history again
 * could not be matched with what is stored. Each assistant UIMessage opens
 * with the `step-start` its streamed round began with, so a stored round
 * reads as the stream built it.
 *
 * A tool result's message id is derived from its tool call's id
 * (`toolResultMessageId`), and its `content` from the result
 * (`toolMessageContent`): a UIMessage carries neither, and a client that
 * sends its whole history again then sends the ids already stored, which the
 * server skips.
 */
import { Schema, SchemaGetter } from "effect"
import { AgentName } from "./Agents.ts"
import type { ChatMessage, Part, TextPart, ToolCall, ToolResult } from "./Chat.ts"
import { ChatId, DataPart, fitsMessageId, MAX_MESSAGE_ID, MessageId } from "./Chat.ts"
import { JsonObject, JsonValue, NonEmptyText, Text } from "./Json.ts"
import { approvalsOf, decisionOf } from "./Approvals.ts"

// ---------------------------------------------------------------------------
// Tool results as transcript messages

const RESULT_ID_PREFIX = "result_"

/**
 * 16 hex digits of a 64-bit hash of `text`'s UTF-16 code units (two 32-bit multiplicative hashes,
 * FNV-1a's and MurmurHash2's constants): short, the same in a browser and on the server, and linear
 * in plain integer steps, so a request's megabytes-long id costs milliseconds.
 */
const digest64 = (text: string): string => {
  let a = 0x811c9dc5
  let b = 0x9e3779b9
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    a = Math.imul(a ^ unit, 0x01000193)
    b = Math.imul(b ^ unit, 0x5bd1e995)
    b ^= b >>> 15
  }
  return (a >>> 0).toString(16).padStart(8, "0") + (b >>> 0).toString(16).padStart(8, "0")
}

/** The first `count` code points of `text`, read no further than they go. */
const headOf = (text: string, count: number): string => {
  let head = ""
  let taken = 0
  for (const point of text) {
    if (taken++ === count) break
    head += point
  }
  return head
}

/**
 * The id of the `tool` message answering a tool call: deterministic, so a result sent again is the
 * one stored. Providers' and clients' call ids are short, but nothing bounds them: one too long to
 * follow the prefix within a message id keeps its head and ends with a digest of the whole id, so
 * every call still has a valid id of its own.
 */
export const toolResultMessageId = (toolCallId: string): string => {
  const id = `${RESULT_ID_PREFIX}${toolCallId}`
  if (fitsMessageId(id)) return id
  const tail = `~${digest64(toolCallId)}`
  return headOf(id, MAX_MESSAGE_ID - tail.length) + tail
}

/** Longest tool-message `content`; the full value stays in `toolResult`. */
const maxToolContent = 2000

/**
 * A tool message's `content`: a short text of the result or the error, for
 * people reading the transcript. Providers read the `toolResult` itself, so
 * shortening here loses nothing.
 */
export const toolMessageContent = (result: ToolResult): string => {
  const text = result.error !== undefined
    ? `Error: ${result.error}`
    : result.result === undefined || result.result === null
    ? "OK"
    : typeof result.result === "string"
    ? result.result
    : JSON.stringify(result.result)
  return text.length > maxToolContent ? `${text.slice(0, maxToolContent - 1)}…` : text
}

/** The `tool` message carrying a result: its id and content derived from the result, so every writer agrees. */
export const toolResultMessage = (toolResult: ToolResult, timestamp: number): ChatMessage => ({
  id: toolResultMessageId(toolResult.toolCallId),
  role: "tool",
  content: toolMessageContent(toolResult),
  toolResult,
  timestamp
})

// ---------------------------------------------------------------------------
// The UIMessage subset

export const UiTextPart = Schema.Struct({
  type: Schema.Literal("text"),
  text: Text,
  state: Schema.optionalKey(Schema.Literals(["streaming", "done"]))
})
export type UiTextPart = typeof UiTextPart.Type

/** Where a provider round began (the stream's `start-step`). */
export const UiStepStartPart = Schema.Struct({ type: Schema.Literal("step-start") })
export type UiStepStartPart = typeof UiStepStartPart.Type

/** The tool states of the AI SDK's UIMessage, approvals' included (docs/tools.md). */
export const UiToolState = Schema.Literals([
  "input-streaming",
  "input-available",
  "approval-requested",
  "approval-responded",
  "output-available",
  "output-error",
  "output-denied"
])
export type UiToolState = typeof UiToolState.Type

/** A call's approval as the AI SDK holds it: asked (`id`), then decided (`approved`, `reason`). */
export const UiToolApproval = Schema.Struct({
  id: Text,
  approved: Schema.optionalKey(Schema.Boolean),
  reason: Schema.optionalKey(Text)
})
export type UiToolApproval = typeof UiToolApproval.Type

const toolFields = {
  // Unbounded, as the transcript's call ids are: the result's message id stays valid whatever its length.
  toolCallId: NonEmptyText,
  state: UiToolState,
  input: Schema.optionalKey(JsonValue),
  output: Schema.optionalKey(JsonValue),
  errorText: Schema.optionalKey(Text),
  approval: Schema.optionalKey(UiToolApproval)
}

/** The approval states carry the approval they are about (`approval.id`), as the AI SDK's parts do. */
const approvalWhereAsked = Schema.makeFilter((part: { readonly state: UiToolState; readonly approval?: UiToolApproval }) =>
  (part.state === "approval-requested" || part.state === "approval-responded" || part.state === "output-denied") && part.approval === undefined
    ? `a part in state "${part.state}" needs its approval ({ id })`
    : undefined
)

/** A call of a tool by name: `tool-<name>`. */
export const UiToolPart = Schema.Struct({ type: Schema.TemplateLiteral(["tool-", NonEmptyText]), ...toolFields }).check(approvalWhereAsked)
export type UiToolPart = typeof UiToolPart.Type

/** A call of a tool the client has no type for: the name in `toolName`. */
export const UiDynamicToolPart = Schema.Struct({ type: Schema.Literal("dynamic-tool"), toolName: NonEmptyText, ...toolFields }).check(
  approvalWhereAsked
)
export type UiDynamicToolPart = typeof UiDynamicToolPart.Type

/** A UI-only payload (the transcript's data part, with the AI SDK's optional `id`). */
export const UiDataPart = Schema.Struct({ ...DataPart.fields, id: Schema.optionalKey(Text) })
export type UiDataPart = typeof UiDataPart.Type

/** The parts Switchboard reads and writes. */
export const UiMessagePart = Schema.Union([UiTextPart, UiStepStartPart, UiToolPart, UiDynamicToolPart, UiDataPart])
export type UiMessagePart = typeof UiMessagePart.Type

const isKnownPartType = (type: string) =>
  type === "text" || type === "step-start" || type === "dynamic-tool" || type.startsWith("tool-") || type.startsWith("data-")

/**
 * Any other part (reasoning, file, source-url, …): a client may hold them, and
 * nothing of them reaches the transcript. A part of a known type that does not
 * match its schema is an error, not ignored.
 */
const IgnoredPart = Schema.Struct({
  type: Schema.String.check(Schema.makeFilter((type: string) => isKnownPartType(type) ? `not a valid "${type}" part` : undefined))
})

const isKnownPart = (part: UiMessagePart | typeof IgnoredPart.Type): part is UiMessagePart => isKnownPartType(part.type)

/** The parts of a message as a client sends them; decoded, only those Switchboard reads remain. */
const UiMessageParts = Schema.Array(Schema.Union([UiMessagePart, IgnoredPart])).pipe(
  Schema.decodeTo(Schema.toType(Schema.Array(UiMessagePart)), {
    decode: SchemaGetter.transform((parts) => parts.filter(isKnownPart)),
    encode: SchemaGetter.transform((parts) => parts)
  })
)

export const UiRole = Schema.Literals(["system", "user", "assistant"])
export type UiRole = typeof UiRole.Type

export const UiMessage = Schema.Struct({
  id: MessageId,
  role: UiRole,
  parts: UiMessageParts,
  /** Any JSON; an object is the message's `metadata`, its `timestamp` (epoch ms) the message's. */
  metadata: Schema.optionalKey(JsonValue)
})
export type UiMessage = typeof UiMessage.Type

/**
 * The body of `POST /api/ui/chat`, as `DefaultChatTransport` sends it: its
 * `body` option's keys arrive at the top level beside these, so `agent` and
 * `context` are read there and other keys are dropped.
 */
export const UiChatRequest = Schema.Struct({
  /** The chat's id (`useChat`'s `id`). */
  id: ChatId,
  messages: Schema.Array(UiMessage).check(Schema.isMinLength(1)),
  trigger: Schema.optionalKey(Schema.Literals(["submit-message", "regenerate-message"])),
  messageId: Schema.optionalKey(Text),
  agent: Schema.optionalKey(AgentName),
  context: Schema.optionalKey(JsonObject)
})
export type UiChatRequest = typeof UiChatRequest.Type

/** `GET /api/chats/{chatId}/ui-messages`. */
export const UiTranscript = Schema.Struct({ messages: Schema.Array(UiMessage) })
export type UiTranscript = typeof UiTranscript.Type

// ---------------------------------------------------------------------------
// Transcript → UIMessages

/** As the provider adapters read a result: an empty error is no error. */
const failed = (result: ToolResult): result is ToolResult & { readonly error: string } =>
  result.error !== undefined && result.error !== ""

/** The call of an assistant message, its answer when it has one, and the approval it asked for. */
const toolPartOf = (
  call: ToolCall,
  answer: ChatMessage | undefined,
  approvalId: string | undefined
): UiToolPart => {
  const part = { type: `tool-${call.name}` as const, toolCallId: call.id, input: call.args }
  const result = answer?.toolResult
  if (result === undefined) {
    return approvalId === undefined ? { ...part, state: "input-available" } : { ...part, state: "approval-requested", approval: { id: approvalId } }
  }
  const decided = answer === undefined ? undefined : decisionOf(answer)
  const approval = decided === undefined ? {} : {
    approval: { id: decided.id, approved: decided.approved, ...(decided.reason === undefined ? {} : { reason: decided.reason }) }
  }
  if (decided?.approved === false) return { ...part, state: "output-denied", ...approval }
  if (failed(result)) return { ...part, state: "output-error", errorText: result.error, ...approval }
  // The AI SDK requires `output`, and JSON has no undefined: a result without a value is null.
  return { ...part, state: "output-available", output: result.result ?? null, ...approval }
}

const isTextPart = (part: Part): part is TextPart => part.type === "text" && "text" in part

// The AI SDK requires `data`: a part stored without one shows null.
const uiDataPartOf = (part: Part): UiDataPart => ({ type: part.type, data: "data" in part ? part.data ?? null : null })

/** The text and data of a message: its text parts when it has any, else its content. */
const contentPartsOf = (message: ChatMessage): Array<UiTextPart | UiDataPart> => {
  const parts = message.parts ?? []
  // Text the stream gave an assistant message is finished: the AI SDK marks it `done`.
  const text = (t: string): UiTextPart =>
    message.role === "assistant" ? { type: "text", text: t, state: "done" } : { type: "text", text: t }
  if (parts.some(isTextPart)) return parts.map((p) => isTextPart(p) ? text(p.text) : uiDataPartOf(p))
  const data = parts.map(uiDataPartOf)
  // A user or system UIMessage needs a part: an empty text one when it has nothing else.
  const needsText = message.content !== "" || (message.role !== "assistant" && data.length === 0)
  return needsText ? [text(message.content), ...data] : data
}

/**
 * The transcript as UIMessages: one per stored message but `tool` ones, each
 * result folded into the tool part of the call it answers (the first result
 * of a call wins; a result answering no call of the transcript is left out).
 * Every message's `metadata` gains its `timestamp`.
 */
export const toUiMessages = (transcript: ReadonlyArray<ChatMessage>): Array<UiMessage> => {
  const results = new Map<string, ChatMessage>()
  for (const message of transcript) {
    const result = message.role === "tool" ? message.toolResult : undefined
    if (result !== undefined && !results.has(result.toolCallId)) results.set(result.toolCallId, message)
  }
  return transcript.flatMap((message): Array<UiMessage> => {
    if (message.role === "tool") return []
    const content = contentPartsOf(message)
    const approvals = new Map(Object.entries(approvalsOf(message)).map(([id, callId]) => [callId, id]))
    const parts: Array<UiMessagePart> = message.role === "assistant"
      ? [{ type: "step-start" }, ...content, ...(message.toolCalls ?? []).map((c) => toolPartOf(c, results.get(c.id), approvals.get(c.id)))]
      : content
    return [{ id: message.id, role: message.role, parts, metadata: { ...message.metadata, timestamp: message.timestamp } }]
  })
}

// ---------------------------------------------------------------------------
// UIMessages → transcript

const isUiTextPart = (part: UiMessagePart): part is UiTextPart => part.type === "text"

const isUiDataPart = (part: UiMessagePart): part is UiDataPart => part.type.startsWith("data-")

const chatPartOf = (part: UiMessagePart): Part =>
  isUiTextPart(part)
    ? { type: "text", text: part.text }
    : "data" in part && part.data !== undefined
    ? { type: part.type, data: part.data }
    : { type: part.type }

/** A tool part (`tool-<name>` or `dynamic-tool`). */
export const isUiToolPart = (part: UiMessagePart): part is UiToolPart | UiDynamicToolPart =>
  part.type === "dynamic-tool" || part.type.startsWith("tool-")

const toolNameOf = (part: UiToolPart | UiDynamicToolPart): string =>
  "toolName" in part ? part.toolName : part.type.slice("tool-".length)

const isJsonObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const toolCallOf = (part: UiToolPart | UiDynamicToolPart): ToolCall => {
  const call = { id: part.toolCallId, name: toolNameOf(part) }
  return isJsonObject(part.input)
    ? { ...call, args: part.input }
    : { ...call, args: {}, invalidArgs: JSON.stringify(part.input) ?? "" }
}

const toolResultOf = (part: UiToolPart | UiDynamicToolPart): ToolResult | undefined => {
  const result = { toolCallId: part.toolCallId, name: toolNameOf(part) }
  switch (part.state) {
    case "output-available":
      return part.output === undefined || part.output === null ? result : { ...result, result: part.output }
    case "output-error":
      return { ...result, error: part.errorText ?? "" }
    default:
      return undefined
  }
}

/** The message's own metadata: the object without the `timestamp` it carried for the UI. */
const metadataOf = (metadata: unknown): { readonly metadata?: JsonObject } => {
  if (!isJsonObject(metadata)) return {}
  const { timestamp: _timestamp, ...rest } = metadata
  return Object.keys(rest).length === 0 ? {} : { metadata: rest }
}

const timestampOf = (metadata: unknown, now: number): number => {
  const timestamp = isJsonObject(metadata) ? metadata["timestamp"] : undefined
  return typeof timestamp === "number" && Number.isFinite(timestamp) ? timestamp : now
}

/**
 * What UIMessages say, as transcript messages: one per UIMessage with its id
 * — `content` its text parts joined by newlines (as providers read text
 * parts), `parts` its text and data parts when it has a data part, an
 * assistant's `toolCalls` its tool parts but those still streaming — and
 * after an assistant message a `tool` message per tool part with an output
 * or an error (`toolResultMessage`, timestamped `now`). A message's
 * timestamp is its `metadata.timestamp`, else `now`.
 */
export const fromUiMessages = (messages: ReadonlyArray<UiMessage>, now: number): Array<ChatMessage> =>
  messages.flatMap((ui): Array<ChatMessage> => {
    const kept = ui.parts.filter((p) => isUiTextPart(p) || isUiDataPart(p))
    const content = kept.filter(isUiTextPart).map((p) => p.text).join("\n")
    const parts = kept.some(isUiDataPart) ? { parts: kept.map(chatPartOf) } : {}
    const message = { id: ui.id, role: ui.role, content, ...parts, ...metadataOf(ui.metadata), timestamp: timestampOf(ui.metadata, now) }
    if (ui.role !== "assistant") return [message]
    const tools = ui.parts.filter(isUiToolPart).filter((p) => p.state !== "input-streaming")
    const toolCalls = tools.map(toolCallOf)
    const results = tools.flatMap((p) => {
      const result = toolResultOf(p)
      return result === undefined ? [] : [toolResultMessage(result, now)]
    })
    return [toolCalls.length === 0 ? message : { ...message, toolCalls }, ...results]
  })
