/**
 * The chat page's stores, one of each per tab: the client package's chat and agent stores, persisted
 * in `localStorage` (`webStorage`), the conversation in view as UIMessages (`uiChatStore`, which the
 * message list renders) and the lock every turn and re-sync takes (the client's job watch takes it
 * for its re-syncs).
 */
import { makeAgentStore, makeChatStore, memoryStorage, webStorage } from "@switchboard/client"
import type { AgentStore, ChatState, ChatStore } from "@switchboard/client"
import { Semaphore } from "effect"
import type { StateStorage } from "zustand/middleware"
import { createStore } from "zustand/vanilla"
import type { UiMessage } from "@switchboard/domain"
import { uiMessagesOf } from "./UiChat.ts"

/**
 * `localStorage` under the client's `switchboard:` prefix; memory when the browser refuses it. A
 * conversation past the quota keeps its last copy that fitted (its transcript is the server's).
 */
export const storage = ((): StateStorage<void> => {
  try {
    localStorage.getItem("switchboard:probe")
    const told = new Set<string>()
    return webStorage(localStorage, "switchboard:", (name, error) => {
      if (told.has(name)) return
      told.add(name)
      console.warn(`switchboard: the browser's storage refused "${name}"; a reload re-syncs it from the server`, error)
    })
  } catch {
    return memoryStorage()
  }
})()

/** The conversation in view: its id, its messages, whether a turn runs, the last error. */
export const chatStore: ChatStore = makeChatStore(storage)

/** What the agent is doing (status, active tool) and the project context it works in. */
export const agentStore: AgentStore = makeAgentStore(storage)

/** The conversation in view as the page renders it: its messages as UIMessages (`UiChat.ts`). */
export interface UiChatState {
  readonly chatId: string
  readonly messages: ReadonlyArray<UiMessage>
  /** The id of the message streaming in, if one is. */
  readonly streamingId: string | null
}

const uiChatOf = (state: ChatState): UiChatState => ({
  chatId: state.chatId,
  messages: uiMessagesOf(state.messages, state.streamingId),
  streamingId: state.streamingId
})

/**
 * The chat store's conversation as UIMessages, kept in step with it: what the message list renders.
 * The orchestrator and the job watch write the chat store (the client package's, the CLI's); the
 * page reads this one.
 */
export const uiChatStore = createStore<UiChatState>()(() => uiChatOf(chatStore.getState()))
chatStore.subscribe((state, before) => {
  if (state.messages !== before.messages || state.streamingId !== before.streamingId || state.chatId !== before.chatId) {
    uiChatStore.setState(uiChatOf(state), true)
  }
})

/** One turn or re-sync at a time, whichever starts it (the page, the job watch). */
export const lock: Semaphore.Semaphore = Semaphore.makeUnsafe(1)
