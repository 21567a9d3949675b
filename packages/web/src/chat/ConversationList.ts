/**
 * The list of the user's conversations (its id, its agent, a title), so the page can list and
 * reopen them. The server's `GET /api/chats` is the source (`Conversations.tsx` loads it: a second
 * browser of the same user lists the same chats); this store is its cache in `localStorage`, shown
 * before the server answers, plus the drafts the server does not have yet (a new chat before its
 * first turn). The caches belong to one user (`owner`): another user signing in on this browser, or
 * signing out, empties them.
 */
import { createJSONStorage, persist } from "zustand/middleware"
import { createStore } from "zustand/vanilla"
import type { ChatSummary } from "@switchboard/domain"
import { onSignOut, ownerOf, sessionStore } from "../api/Session.ts"
import { agentStore, chatStore, storage } from "./ChatStores.ts"

export interface Conversation {
  readonly chatId: string
  /** The first thing the user said, shortened; "New chat" until then. */
  readonly title: string
  /** The agent it was started with; none: the server's default (or the chat's own). */
  readonly agent?: string | undefined
  /** Its last message's time (epoch ms), or when it was started. */
  readonly updatedAt: number
  /** Listed by the server (`GET /api/chats`); not: a draft of this browser's, not sent yet. */
  readonly synced?: boolean | undefined
}

export interface ConversationsState {
  /** Most recent first. */
  readonly conversations: ReadonlyArray<Conversation>
  /** Whose they are (`ownerOf` the chat token); none: kept from before users were known. */
  readonly owner?: string | undefined
  readonly upsert: (conversation: Pick<Conversation, "chatId"> & Partial<Conversation>) => void
  readonly remove: (chatId: string) => void
  /**
   * The server's list: `replace` puts its chats in place of every one listed by the server before
   * (one gone from it was deleted, here or elsewhere), `append` adds an older page; drafts stay.
   */
  readonly fromServer: (chats: ReadonlyArray<ChatSummary>, mode: "replace" | "append") => void
}

const isConversation = (value: unknown): value is Conversation => {
  if (typeof value !== "object" || value === null) return false
  const c = value as Record<string, unknown>
  return typeof c["chatId"] === "string" && /^[A-Za-z0-9_.:-]{1,128}$/.test(c["chatId"]) && typeof c["title"] === "string" &&
    typeof c["updatedAt"] === "number" && (c["agent"] === undefined || typeof c["agent"] === "string") &&
    (c["synced"] === undefined || typeof c["synced"] === "boolean")
}

const byRecency = (a: Conversation, b: Conversation) => b.updatedAt - a.updatedAt

/** A chat as the server lists it. */
const fromSummary = (chat: ChatSummary): Conversation => {
  const updatedAt = Date.parse(chat.updatedAt)
  return {
    chatId: chat.chatId,
    title: chat.title === "" ? "New chat" : chat.title,
    agent: chat.agent,
    updatedAt: Number.isFinite(updatedAt) ? updatedAt : 0,
    synced: true
  }
}

export const conversationsStore = createStore<ConversationsState>()(persist((set) => ({
  conversations: [],
  owner: undefined,
  upsert: (next) =>
    set((state) => {
      const before = state.conversations.find((c) => c.chatId === next.chatId)
      // A chat the server lists keeps the server's title (this browser's is a shorter copy).
      const merged: Conversation = {
        title: "New chat",
        updatedAt: Date.now(),
        ...before,
        ...next,
        ...(before?.synced === true ? { title: before.title, synced: true } : {})
      }
      if (before !== undefined && before.title === merged.title && before.updatedAt === merged.updatedAt && before.agent === merged.agent) {
        return state
      }
      return { conversations: [merged, ...state.conversations.filter((c) => c.chatId !== next.chatId)].sort(byRecency) }
    }),
  remove: (chatId) => set((state) => ({ conversations: state.conversations.filter((c) => c.chatId !== chatId) })),
  fromServer: (chats, mode) =>
    set((state) => {
      const listed = new Set(chats.map((chat) => chat.chatId))
      const kept = state.conversations.filter((c) => !listed.has(c.chatId) && (mode === "append" || c.synced !== true))
      return { conversations: [...chats.map(fromSummary), ...kept].sort(byRecency) }
    })
}), {
  name: "chat-list",
  version: 1,
  storage: createJSONStorage(() => storage),
  partialize: (state) => ({ conversations: state.conversations, owner: state.owner }),
  merge: (persisted, current) => {
    const saved = persisted as { conversations?: unknown; owner?: unknown } | undefined
    const list = saved?.conversations
    return {
      ...current,
      conversations: Array.isArray(list) ? list.filter(isConversation).sort(byRecency) : current.conversations,
      owner: typeof saved?.owner === "string" ? saved.owner : undefined
    }
  }
}))

/** Empties what this browser keeps of a user's chats: the list, the conversation in view, the project context. */
const forgetUserData = (owner: string | undefined) => {
  conversationsStore.setState({ conversations: [], owner })
  chatStore.getState().clearMessages()
  agentStore.getState().setContext(null)
  agentStore.getState().reset()
}

/**
 * The caches are `owner`'s from now on: another user's (or ones kept from before users, when a
 * user signs in) are emptied first. The shared token's user takes over a cache of unknown owner.
 */
export const adoptOwner = (owner: string) => {
  const before = conversationsStore.getState().owner
  if (before === owner) return
  if (before === undefined && owner === "shared") conversationsStore.setState({ owner })
  else forgetUserData(owner)
}

// A token kept in this tab, and every new one: whose the caches are. Signing out empties them.
{
  const token = sessionStore.getState().tokens.chat
  if (token !== undefined) adoptOwner(ownerOf(token))
}
sessionStore.subscribe((state, before) => {
  if (state.tokens.chat !== before.tokens.chat && state.tokens.chat !== undefined) adoptOwner(ownerOf(state.tokens.chat))
})
onSignOut(() => forgetUserData(undefined))

const TITLE_LENGTH = 60

const titleOf = (text: string) => {
  const line = text.trim().replace(/\s+/g, " ")
  return line.length > TITLE_LENGTH ? `${line.slice(0, TITLE_LENGTH - 1)}…` : line
}

// The list follows the chat store: the conversation in view is listed, titled by its first user message.
const listCurrent = () => {
  const { chatId, messages, streamingId } = chatStore.getState()
  if (messages.length === 0 || streamingId !== null) return
  const first = messages.find((m) => m.role === "user" && m.metadata?.["subagentResult"] === undefined)
  conversationsStore.getState().upsert({
    chatId,
    ...(first === undefined ? {} : { title: titleOf(first.content) || "New chat" }),
    updatedAt: messages.at(-1)!.timestamp
  })
}
chatStore.subscribe((state, before) => {
  if (state.messages !== before.messages || state.streamingId !== before.streamingId) listCurrent()
})
