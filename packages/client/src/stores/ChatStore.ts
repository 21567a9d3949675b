/**
 * `chatStore` (docs/chat.md, the client): the conversation as the
 * user sees it — messages, whether a turn is running, and the last API error
 * (its sentence, `error`, and the failure it describes, `failure`).
 *
 * A vanilla Zustand store (`createStore<State>()(persist(...))`, the spec's
 * pattern without React) persisted through any `StateStorage`: the CLI passes
 * a file storage so history survives between runs, tests pass memory. Only
 * data is persisted (`chatId`, `messages`); `loading` and `error` describe the
 * running process and start fresh.
 *
 * `chatId` identifies the conversation to the server, which persists the
 * transcript under it; `clearMessages` starts a new conversation with a new id.
 *
 * A streamed answer is one message that grows: `startStreaming` shows it at
 * once, `setStreamingContent` updates its text as the deltas arrive, and
 * `finishStreaming` puts the final message in its place (a UI keyed by
 * message id sees one message, never a second). Until it is final it is not
 * persisted, and a delta writes nothing to the storage: half an answer must
 * not outlive a crash as if it were the answer (the server has the whole).
 */
import { ChatId, ChatMessage } from "@switchboard/domain"
import type { ToolCall } from "@switchboard/domain"
import type { ApiFailure } from "../api/ApiFailure.ts"
import { Schema } from "effect"
import { createJSONStorage, persist } from "zustand/middleware"
import type { PersistStorage, StateStorage } from "zustand/middleware"
import { createStore } from "zustand/vanilla"
import type { StateCreator, StoreApi } from "zustand/vanilla"
import { newChatId, newMessageId } from "./Ids.ts"

/** What `addMessage` accepts: a message whose `id` and `timestamp` may be left for the store to fill. */
export type NewChatMessage = Omit<ChatMessage, "id" | "timestamp"> & {
  readonly id?: string
  readonly timestamp?: number
}

export interface ChatState {
  readonly chatId: string
  readonly messages: ReadonlyArray<ChatMessage>
  readonly loading: boolean
  readonly error: string | null
  /**
   * The last error described: `error` is its `message`; with the HTTP status, the server's `code`
   * and `retryAfter` when there were (a 503 `overloaded`: busy, retry in `retryAfter` seconds).
   */
  readonly failure: ApiFailure | null
  /** The id of the message that is streaming in, if one is. */
  readonly streamingId: string | null
  /** Appends a message, filling a missing `id`/`timestamp`; returns the stored message. */
  readonly addMessage: (msg: NewChatMessage) => ChatMessage
  /** Appends a message that streams in (as `addMessage`, but not persisted until `finishStreaming`). */
  readonly startStreaming: (msg: NewChatMessage) => ChatMessage
  /** The streaming message's text so far; with `toolCalls`, the calls it has made so far too (a server tool running). */
  readonly setStreamingContent: (content: string, toolCalls?: ReadonlyArray<ToolCall>) => void
  /** Puts `final` in the streaming message's place, or removes it (`null`); what is final is persisted. */
  readonly finishStreaming: (final: ChatMessage | null) => void
  readonly setLoading: (v: boolean) => void
  /**
   * Records an error (a sentence, or the failure described: its code and `retryAfter` kept); a
   * failed turn is over, so this also clears `loading`.
   */
  readonly setError: (e: string | ApiFailure | null) => void
  /** Empties the history and starts a new conversation (new `chatId`). */
  readonly clearMessages: () => void
  /** Replaces the history with the server's transcript (a re-sync: steers and wake answers included). */
  readonly replaceMessages: (messages: ReadonlyArray<ChatMessage>) => void
}

type PersistedChat = Pick<ChatState, "chatId" | "messages">

export const chatStoreName = "chat-store"

const decodeChatId = Schema.decodeUnknownOption(ChatId)
const decodeMessage = Schema.decodeUnknownOption(ChatMessage)

/**
 * Rehydration trusts nothing from disk: a hand-edited or older file must not
 * put a malformed message into the history (the server would reject every
 * later turn with a 400). Invalid messages are dropped, an invalid chat id
 * is replaced.
 */
const mergePersisted = (persisted: unknown, current: ChatState): ChatState => {
  if (typeof persisted !== "object" || persisted === null) return current
  const raw = persisted as { readonly chatId?: unknown; readonly messages?: unknown }
  const chatId = decodeChatId(raw.chatId)
  const messages = Array.isArray(raw.messages)
    ? raw.messages.flatMap((m) => {
      const decoded = decodeMessage(m)
      return decoded._tag === "Some" ? [decoded.value] : []
    })
    : current.messages
  return { ...current, chatId: chatId._tag === "Some" ? chatId.value : current.chatId, messages }
}

const completed = (msg: NewChatMessage): ChatMessage => ({ ...msg, id: msg.id ?? newMessageId(), timestamp: msg.timestamp ?? Date.now() })

/** `messages` with the streaming one (searched from the end, where it is) replaced or removed. */
const withStreaming = (state: ChatState, replace: (message: ChatMessage) => ReadonlyArray<ChatMessage>): ReadonlyArray<ChatMessage> => {
  const i = state.streamingId === null ? -1 : state.messages.findLastIndex((m) => m.id === state.streamingId)
  return i < 0 ? state.messages : [...state.messages.slice(0, i), ...replace(state.messages[i]!), ...state.messages.slice(i + 1)]
}

const chatState: StateCreator<ChatState> = (set) => ({
  chatId: newChatId(),
  messages: [],
  loading: false,
  error: null,
  failure: null,
  streamingId: null,
  addMessage: (msg) => {
    const message = completed(msg)
    set((state) => ({ messages: [...state.messages, message] }))
    return message
  },
  startStreaming: (msg) => {
    const message = completed(msg)
    set((state) => ({ messages: [...state.messages, message], streamingId: message.id }))
    return message
  },
  setStreamingContent: (content, toolCalls) =>
    set((state) => ({
      messages: withStreaming(state, (message) => [toolCalls === undefined ? { ...message, content } : { ...message, content, toolCalls }])
    })),
  finishStreaming: (final) =>
    set((state) => ({ messages: withStreaming(state, () => final === null ? [] : [final]), streamingId: null })),
  setLoading: (v) => set({ loading: v }),
  setError: (e) => {
    const failure = typeof e === "string" ? { message: e } : e
    set({ error: failure?.message ?? null, failure, loading: false })
  },
  clearMessages: () => set({ messages: [], chatId: newChatId(), error: null, failure: null, streamingId: null }),
  replaceMessages: (messages) => set({ messages: [...messages], streamingId: null })
})

/** What is persisted: the final messages (a streaming one is not, yet). */
const persisted = (state: ChatState): PersistedChat => ({
  chatId: state.chatId,
  messages: state.streamingId === null ? state.messages : state.messages.filter((m) => m.id !== state.streamingId)
})

/**
 * Writes only when what is persisted changed. The persist middleware writes
 * on every change, and a streaming message changes the state on every delta:
 * with this, those changes (and `loading`) cost a comparison of references.
 */
const writeOnChange = (storage: PersistStorage<PersistedChat> | undefined): PersistStorage<PersistedChat> | undefined => {
  if (storage === undefined) return undefined
  let last: PersistedChat | undefined
  const unchanged = (next: PersistedChat) =>
    last !== undefined && last.chatId === next.chatId && last.messages.length === next.messages.length &&
    last.messages.every((message, i) => message === next.messages[i])
  return {
    getItem: (name) => storage.getItem(name),
    setItem: (name, value) => {
      if (unchanged(value.state)) return
      last = value.state
      return storage.setItem(name, value)
    },
    removeItem: (name) => {
      last = undefined
      return storage.removeItem(name)
    }
  }
}

export const makeChatStore = (storage: StateStorage) =>
  createStore<ChatState>()(persist(chatState, {
    name: chatStoreName,
    version: 1,
    storage: writeOnChange(createJSONStorage<PersistedChat>(() => storage)),
    partialize: persisted,
    merge: mergePersisted
  }))

/**
 * The same store, not persisted: for one turn of `run()` (the promise API),
 * where the caller owns the history. A persisted store serializes its state on
 * every change, several times per loop step.
 */
export const makeTransientChatStore = (): StoreApi<ChatState> => createStore<ChatState>()(chatState)

export type ChatStore = ReturnType<typeof makeChatStore>
