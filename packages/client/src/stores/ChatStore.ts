/**
 * `chatStore` (docs/chat.md, the client): the conversation as the
 * user sees it — messages, whether a turn is running, and the last API error.
 *
 * A vanilla Zustand store (`createStore<State>()(persist(...))`, the spec's
 * pattern without React) persisted through any `StateStorage`: the CLI passes
 * a file storage so history survives between runs, tests pass memory. Only
 * data is persisted (`chatId`, `messages`); `loading` and `error` describe the
 * running process and start fresh.
 *
 * `chatId` identifies the conversation to the server, which persists the
 * transcript under it; `clearMessages` starts a new conversation with a new id.
 */
import { ChatId, ChatMessage } from "@switchboard/domain"
import { Schema } from "effect"
import { createJSONStorage, persist } from "zustand/middleware"
import type { StateStorage } from "zustand/middleware"
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
  /** Appends a message, filling a missing `id`/`timestamp`; returns the stored message. */
  readonly addMessage: (msg: NewChatMessage) => ChatMessage
  readonly setLoading: (v: boolean) => void
  /** Records an error; a failed turn is over, so this also clears `loading`. */
  readonly setError: (e: string | null) => void
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

const chatState: StateCreator<ChatState> = (set) => ({
  chatId: newChatId(),
  messages: [],
  loading: false,
  error: null,
  addMessage: (msg) => {
    const message: ChatMessage = { ...msg, id: msg.id ?? newMessageId(), timestamp: msg.timestamp ?? Date.now() }
    set((state) => ({ messages: [...state.messages, message] }))
    return message
  },
  setLoading: (v) => set({ loading: v }),
  setError: (e) => set({ error: e, loading: false }),
  clearMessages: () => set({ messages: [], chatId: newChatId(), error: null }),
  replaceMessages: (messages) => set({ messages: [...messages] })
})

export const makeChatStore = (storage: StateStorage) =>
  createStore<ChatState>()(persist(chatState, {
    name: chatStoreName,
    version: 1,
    storage: createJSONStorage<PersistedChat>(() => storage),
    partialize: (state): PersistedChat => ({ chatId: state.chatId, messages: state.messages }),
    merge: mergePersisted
  }))

/**
 * The same store, not persisted: for one turn of `run()` (the promise API),
 * where the caller owns the history. A persisted store serializes its state on
 * every change, several times per loop step.
 */
export const makeTransientChatStore = (): StoreApi<ChatState> => createStore<ChatState>()(chatState)

export type ChatStore = ReturnType<typeof makeChatStore>
