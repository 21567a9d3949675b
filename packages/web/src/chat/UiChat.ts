/**
 * The conversation as the console renders it: the AI SDK's `UIMessage`s, the shape
 * `GET /api/chats/{chatId}/ui-messages` answers (docs/streaming.md, "UIMessage ↔ transcript").
 *
 * The chat store (the client package's, which the orchestrator and the job watch write) holds the
 * transcript's `ChatMessage`s; `uiMessagesOf` is the one place they become UIMessages, with the
 * domain's own mapping (`toUiMessages`, the server's for `/ui-messages`): one UIMessage per message
 * but `tool` ones, each tool result folded into the tool part of the call it answers, so a tool
 * part carries its own output. Two additions of the console's: the message that is streaming in
 * has its text parts `streaming`, and a call's input that was not a JSON object (`invalidArgs`,
 * which the mapping leaves out) is its tool part's input, as text.
 *
 * A message is converted again only when it, or a result answering one of its calls, changed: the
 * others keep their UIMessage object, so while an answer streams only its item renders again.
 *
 * Pure (no store, no DOM): `ChatStores.ts` keeps `uiChatStore` in step with the chat store.
 */
import type {
  ChatMessage,
  SubagentArtifactData,
  SubagentResultMeta,
  UiDataPart,
  UiDynamicToolPart,
  UiMessage,
  UiStepStartPart,
  UiTextPart,
  UiToolPart,
  UiToolState
} from "@switchboard/domain"
import { subagentArtifactOf, subagentResultOf, toUiMessages } from "@switchboard/domain"

// ---------------------------------------------------------------------------
// Parts

/**
 * A tool part's states: Switchboard's (`UiToolState`) and the AI SDK's approval states, which the
 * console already renders (a read-only card) for when the server asks for approvals.
 */
export type ToolPartState = UiToolState | "approval-requested" | "approval-responded" | "output-denied"

/** The AI SDK's `approval` of a tool part: `approved` once answered, with an optional reason. */
export interface ToolApproval {
  readonly id: string
  readonly approved?: boolean | undefined
  readonly reason?: string | undefined
}

/** A tool part (`tool-<name>` or `dynamic-tool`) in any state. */
export type ToolPart = (Omit<UiToolPart, "state"> | Omit<UiDynamicToolPart, "state">) & {
  readonly state: ToolPartState
  readonly approval?: ToolApproval | undefined
}

/** A data part (`data-<name>`: the transcript's schema checks the prefix). */
export type DataPartData = Omit<UiDataPart, "type"> & { readonly type: `data-${string}` }

/**
 * Every part the console renders, told apart by `type`: the domain's parts (`UiMessagePart`) and
 * tool parts in the approval states.
 */
export type MessagePartData = UiTextPart | UiStepStartPart | ToolPart | DataPartData

/** A message's parts as the console tells them apart (the domain types a data part's `type` as any string). */
export const partsOf = (message: UiMessage): ReadonlyArray<MessagePartData> => message.parts as ReadonlyArray<MessagePartData>

export const isToolPart = (part: { readonly type: string }): part is ToolPart =>
  part.type === "dynamic-tool" || part.type.startsWith("tool-")

/** The tool a tool part calls: `tool-<name>`'s name, or a dynamic tool's `toolName`. */
export const toolNameOf = (part: ToolPart): string => "toolName" in part ? part.toolName : part.type.slice("tool-".length)

// ---------------------------------------------------------------------------
// Messages

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The message's time (epoch ms): `metadata.timestamp`, which `toUiMessages` always sets. */
export const timestampOf = (message: UiMessage): number => {
  const timestamp = isObject(message.metadata) ? message.metadata["timestamp"] : undefined
  return typeof timestamp === "number" ? timestamp : 0
}

/** A stopped answer (the turn was stopped while it streamed): `metadata.stopped`. */
export const isStopped = (message: UiMessage): boolean => isObject(message.metadata) && message.metadata["stopped"] === true

/**
 * The message as the domain's steer readers take it (its metadata and data parts): a sub-agent's
 * result is told apart by the same `subagentResultOf` and `subagentArtifactOf` the server uses.
 */
const steerView = (message: UiMessage, parts: ReadonlyArray<DataPartData>): ChatMessage => ({
  id: message.id,
  role: message.role,
  content: "",
  timestamp: 0,
  ...(isObject(message.metadata) ? { metadata: message.metadata } : {}),
  parts: parts.map(({ data, type }) => data === undefined ? { type } : { type, data })
})

/** A steer's marker (`metadata.subagentResult`): the message is a sub-agent's result, never the user's words. */
export const steerMarkerOf = (message: UiMessage): SubagentResultMeta | undefined => subagentResultOf(steerView(message, []))

/** The full result a `data-subagent-artifact` part carries, when it is a valid one. */
export const artifactOf = (message: UiMessage, part: DataPartData): SubagentArtifactData | undefined =>
  subagentArtifactOf(steerView(message, [part]))

/** Whether a steer carries a valid artifact (then its text part, the model's copy, is not shown). */
export const hasArtifact = (message: UiMessage): boolean =>
  partsOf(message).some((part) => part.type === "data-subagent-artifact" && artifactOf(message, part) !== undefined)

// ---------------------------------------------------------------------------
// ChatMessages → UIMessages

interface Converted {
  /** The tool messages answering the message's calls, in the calls' order, when it was converted. */
  readonly answers: ReadonlyArray<ChatMessage | undefined>
  readonly streaming: boolean
  readonly ui: UiMessage
}

const converted = new WeakMap<ChatMessage, Converted>()

const sameAnswers = (a: ReadonlyArray<ChatMessage | undefined>, b: ReadonlyArray<ChatMessage | undefined>) =>
  a.length === b.length && a.every((answer, i) => answer === b[i])

/**
 * A call whose input was not a JSON object keeps it as `invalidArgs` (its `args` empty), which
 * `toUiMessages` leaves out: the tool part's input is that text, as the stream gave it.
 */
const withInvalidInputs = (message: ChatMessage, ui: UiMessage): UiMessage => {
  const invalid = new Map((message.toolCalls ?? []).flatMap((call) => call.invalidArgs === undefined ? [] : [[call.id, call.invalidArgs] as const]))
  if (invalid.size === 0) return ui
  return {
    ...ui,
    parts: ui.parts.map((part) => {
      const input = isToolPart(part) ? invalid.get(part.toolCallId) : undefined
      return input === undefined ? part : { ...part, input }
    })
  }
}

const streamingText = (message: UiMessage): UiMessage => ({
  ...message,
  parts: message.parts.map((part) => part.type === "text" ? { ...part, state: "streaming" as const } : part)
})

/**
 * The chat store's messages as UIMessages (`toUiMessages`), the one streaming in (`streamingId`)
 * with its text `streaming`. A message unchanged since the last call, with the same results for
 * its calls, is the same UIMessage object as then.
 */
export const uiMessagesOf = (messages: ReadonlyArray<ChatMessage>, streamingId: string | null): ReadonlyArray<UiMessage> => {
  // As `toUiMessages` folds them: the first result of a call wins.
  const results = new Map<string, ChatMessage>()
  for (const message of messages) {
    const id = message.role === "tool" ? message.toolResult?.toolCallId : undefined
    if (id !== undefined && !results.has(id)) results.set(id, message)
  }
  return messages.flatMap((message): ReadonlyArray<UiMessage> => {
    if (message.role === "tool") return []
    const answers = (message.toolCalls ?? []).map((call) => results.get(call.id))
    const streaming = message.id === streamingId
    const before = converted.get(message)
    if (before !== undefined && before.streaming === streaming && sameAnswers(before.answers, answers)) return [before.ui]
    const [ui] = toUiMessages([message, ...answers.filter((answer) => answer !== undefined)])
    if (ui === undefined) return []
    const shown = streaming ? streamingText(withInvalidInputs(message, ui)) : withInvalidInputs(message, ui)
    converted.set(message, { answers, streaming, ui: shown })
    return [shown]
  })
}
