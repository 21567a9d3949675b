/**
 * What a persisted turn takes and answers (`TurnComposer`), and the small
 * pure pieces its stages share: the usage summed over rounds, the messages
 * not stored yet, the answer a client gets.
 */
import type { AgentDefinition, ChatMessage, ChatResponse, DispatchedJob, JsonObject, ProviderChatResponse, ProviderUsage, ToolCall } from "@switchboard/domain"
import type { TurnInFlight } from "@switchboard/domain"
import { ChatNotFound, pendingApprovalsIn } from "@switchboard/domain"
import { Clock, Effect } from "effect"
import type { Settlement, ToolWrites, WrittenRow } from "../ServerTools.ts"
import type { LiveTurn } from "../stream/LiveTurn.ts"
import type { ChatKey } from "../../users/ChatKey.ts"
import { chatIdOf } from "../../users/ChatKey.ts"
import { newMessageId } from "../MessageIds.ts"

/** Provider calls of one turn when the model keeps calling server tools; the last one is offered none. */
export const maxServerToolRounds = 8

/** What a guard decides, looking at the stored transcript under the marker. */
export type TurnGuard = "proceed" | "defer" | "skip"

export interface TurnInput {
  readonly chatId: ChatKey
  /** The request's messages; those already stored (same id) are not stored again. */
  readonly messages: ReadonlyArray<ChatMessage>
  /** Checked against the agent's context schema by the caller (`checkContext`). */
  readonly context: JsonObject | undefined
  /**
   * The agent the turn runs. A client turn opens only a chat of this agent (or a new one, then
   * created as its): a chat of another answers `OtherAgent`, nothing written.
   */
  readonly agent: AgentDefinition
  /** `defer`: nothing is written, the turn is `Deferred`; `skip`: only `settles` is done. */
  readonly guard?: (transcript: ReadonlyArray<ChatMessage>) => TurnGuard
  /**
   * A guarded turn: the transcript as the caller read it just before (a wake's look before it
   * takes the marker). Under the marker the turn then only checks that nothing was stored since,
   * in the statement that takes it, rather than reading the transcript a second time.
   */
  readonly known?: ReadonlyArray<ChatMessage>
  /** Completed by the statement that stores the turn's last message (a wake's job): see `Settlement`. */
  readonly settles?: Settlement
  /**
   * With `known`: the life of the chat the caller looked at (`chats.generation`, a wake's job's
   * chat). The turn is accepted only by that chat, not by one created again under the same id.
   */
  readonly generation?: string
  /**
   * The turn's stream (docs/streaming.md): with one, the provider is called streaming, every chunk
   * is published to it, and a stop asked of it ends the provider call and stores what it produced.
   */
  readonly live?: LiveTurn
  /**
   * What answers calls the transcript left waiting, under the marker before the provider is asked
   * (an approval's decision: the tool run or its denial; a client's new message over pending
   * approvals: their denial). Its messages are stored before the first round; `ask: false` ends the
   * turn there (other calls still wait).
   */
  readonly resume?: Resume
}

/** See `TurnInput.resume`; it fails with `TurnInFlight` when a decided call's continuation still has to run. */
export type Resume = (
  conversation: ReadonlyArray<ChatMessage>,
  live: LiveTurn | undefined
) => Effect.Effect<{ readonly messages: ReadonlyArray<ChatMessage>; readonly ask: boolean }, TurnInFlight>

/** Set once the turn's own last statement released the marker and made the chat's wakes due. */
export interface TurnEnd {
  ended: boolean
  /** The provider's usage, summed over the turn's rounds (streamed turns: the `finish` reports it). */
  usage: ProviderUsage | undefined
  /** The turn was stopped: its answer is what the provider produced until then. */
  stopped: boolean
}

/** One provider round's answer, and whether a stop cut it short (then it has no tool calls). */
export interface RoundAnswer extends ProviderChatResponse {
  readonly stopped: boolean
}

export const addUsage = (total: ProviderUsage | undefined, more: ProviderUsage | undefined): ProviderUsage | undefined =>
  more === undefined ? total : total === undefined ? more : {
    inputTokens: total.inputTokens + more.inputTokens,
    outputTokens: total.outputTokens + more.outputTokens,
    ...(total.cachedInputTokens !== undefined || more.cachedInputTokens !== undefined
      ? { cachedInputTokens: (total.cachedInputTokens ?? 0) + (more.cachedInputTokens ?? 0) }
      : {})
  }

export type TurnOutcome =
  | { readonly _tag: "Answered"; readonly response: ChatResponse }
  /** The operator deleted the chat during the turn: `response` was not stored (nor its jobs dispatched). */
  | { readonly _tag: "ChatGone"; readonly response: ChatResponse }
  | { readonly _tag: "Deferred" }
  | { readonly _tag: "Skipped" }
  /** A client turn found its chat another agent's (`agent`): nothing was taken or stored. */
  | { readonly _tag: "OtherAgent"; readonly agent: string }
  /** A client turn found its chat's transcript at its limit (what it holds): nothing was taken or stored. */
  | { readonly _tag: "Full"; readonly messages: number; readonly bytes: number }

/** The messages of `incoming` whose ids `stored` does not have, each id once: what an append stores. */
export const unstored = (stored: ReadonlyArray<ChatMessage>, incoming: ReadonlyArray<ChatMessage>): Array<ChatMessage> => {
  const ids = new Set(stored.map((m) => m.id))
  return incoming.filter((m) => {
    if (ids.has(m.id)) return false
    ids.add(m.id)
    return true
  })
}

/** The answer a client gets: the text, the calls it runs, the jobs dispatched, the calls waiting for approval. */
export const respond = (assistant: ChatMessage, others: ReadonlyArray<ToolCall>, jobs: ReadonlyArray<DispatchedJob>): ChatResponse => {
  const pending = pendingApprovalsIn([assistant])
  const waiting = new Set(pending.map((p) => p.toolCallId))
  const clientCalls = others.filter((call) => !waiting.has(call.id))
  return {
    content: assistant.content,
    ...(clientCalls.length > 0 ? { toolCalls: clientCalls } : {}),
    messageId: assistant.id,
    ...(jobs.length > 0 ? { jobs } : {}),
    ...(pending.length > 0 ? { pendingApprovals: pending } : {})
  }
}

/** The turn outlived its chat (deleted by the operator): nothing of it was stored. */
export const chatGone = (chatId: ChatKey) =>
  new ChatNotFound({ error: `Chat "${chatIdOf(chatId)}" was deleted while this turn ran: nothing of the turn was stored`, chatId: chatIdOf(chatId) })
export const goneWith = (chatId: ChatKey, response: ChatResponse) =>
  Effect.logInfo(`chat ${chatId} was deleted during its turn: the answer is not stored`).pipe(
    Effect.as({ _tag: "ChatGone", response } as const)
  )

export const assistantMessage = (
  content: string,
  toolCalls: ReadonlyArray<ToolCall>,
  options: { readonly id?: string; readonly metadata?: JsonObject } = {}
) =>
  Clock.currentTimeMillis.pipe(Effect.map((now): ChatMessage => ({
    id: options.id ?? newMessageId(),
    role: "assistant",
    content,
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
    ...(options.metadata === undefined ? {} : { metadata: options.metadata }),
    timestamp: now
  })))

/** A turn's end written: the tools' `after` (the statement committed), the release then needing nothing. */
export const ended = (end: TurnEnd, writes: ToolWrites, row: WrittenRow | undefined) => {
  end.ended = true
  return writes.after(row)
}
