/**
 * The chat's state and its one agent loop, shared by the chat page's components (and the jobs
 * views, through `useChatSession`): the client package's chat and agent stores, persisted in
 * `localStorage` (`webStorage`), the default tool registry (`transcribe_video`, reading a picked
 * file's bytes: `PickedFiles.ts`) and the orchestrator over them — the loop `switchboard chat`
 * runs, streamed. Nothing here is a second orchestrator: `send`, `retry` and `stop` are its own
 * `send`, `run` and `stop`, one turn at a time under `lock` (the lock the client's job watch
 * takes for its re-syncs).
 *
 * The chat store holds one conversation, the one in view; `conversations` is the list of the
 * user's conversations (its id, its agent, a title), so the page can list and reopen them. The
 * server's `GET /api/chats` is the source (`Conversations.tsx` loads it: a second browser of the
 * same user lists the same chats); this store is its cache in `localStorage`, shown before the
 * server answers, plus the drafts the server does not have yet (a new chat before its first turn).
 * The caches belong to one user (`owner`): another user signing in on this browser, or signing
 * out, empties them. Opening one re-syncs its messages from the server's transcript
 * (`openConversation`).
 */
import {
  ChatTransport,
  makeAgentStore,
  makeChatStore,
  makeDefaultRegistry,
  makeOrchestrator,
  MediaTranscriber,
  memoryStorage,
  webStorage
} from "@switchboard/client"
import type { AgentStore, ChatStore, Orchestrator, RunResult } from "@switchboard/client"
import { Cause, Effect, Exit, References, Schedule, Semaphore, Stream } from "effect"
import { createContext, useContext } from "react"
import { createJSONStorage, persist } from "zustand/middleware"
import type { StateStorage } from "zustand/middleware"
import { createStore } from "zustand/vanilla"
import type { ChatSummary } from "@switchboard/domain"
import type { ConsoleApi } from "../api/ConsoleApi.ts"
import { onSignOut, ownerOf, sessionStore } from "../api/Session.ts"
import { readPickedAsset } from "./PickedFiles.ts"

/**
 * `localStorage` under the client's `switchboard:` prefix; memory when the browser refuses it. A
 * conversation past the quota keeps its last copy that fitted (its transcript is the server's).
 */
const storage = ((): StateStorage<void> => {
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

/** One turn or re-sync at a time, whichever starts it (the page, the job watch). */
export const lock: Semaphore.Semaphore = Semaphore.makeUnsafe(1)

// ---------------------------------------------------------------------------
// The list of conversations

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

// ---------------------------------------------------------------------------
// The session: the orchestrator of the API (its token) and the conversation's agent

export interface ChatSession {
  readonly api: ConsoleApi
  readonly chatStore: ChatStore
  readonly agentStore: AgentStore
  readonly orchestrator: Orchestrator
  /** Held by every turn and re-sync. */
  readonly lock: Semaphore.Semaphore
  /** Runs an effect of the client package that needs the chat transport (the orchestrator's, the job watch's). */
  readonly run: <A, E>(effect: Effect.Effect<A, E, ChatTransport>, options?: { readonly signal?: AbortSignal }) => Promise<Exit.Exit<A, E>>
  /** Adds the user's message and runs the turn. */
  readonly send: (text: string) => Promise<void>
  /** Runs the turn again over the stored history (after an error). */
  readonly retry: () => Promise<void>
  /** Stops the running turn (the server keeps what it had, marked stopped). */
  readonly stop: () => Promise<void>
}

/** A turn in progress, whichever session started it: what `stop` and a conversation switch wait for. */
let activeTurn: { readonly orchestrator: Orchestrator; readonly done: Promise<unknown> } | undefined

const turnListeners = new Set<(result: RunResult) => void>()

/** Hears every finished turn's result (its `jobs`: the jobs it dispatched). */
export const onTurnFinished = (listener: (result: RunResult) => void): () => void => {
  turnListeners.add(listener)
  return () => void turnListeners.delete(listener)
}

const isBusy = (error: { readonly code?: string | undefined }) => error.code === "turn_in_flight"

const makeSession = (api: ConsoleApi, agent: string | undefined): ChatSession => {
  const layerOptions = api.options
  const transport = Effect.runSync(Effect.service(ChatTransport).pipe(Effect.provide(ChatTransport.layer(layerOptions))))
  const transcriber = Effect.runSync(Effect.service(MediaTranscriber).pipe(Effect.provide(MediaTranscriber.layer(layerOptions))))
  const registry = makeDefaultRegistry(transcriber, { readAsset: readPickedAsset })
  const orchestrator = makeOrchestrator({ chatStore, agentStore, registry, agent, streaming: true })

  const run: ChatSession["run"] = (effect, options) =>
    Effect.runPromiseExit(
      effect.pipe(Effect.provideService(ChatTransport, transport), Effect.provideService(References.TracerEnabled, false)),
      options
    )

  /** One turn under the lock; a chat busy with a wake turn (409) is tried again for a while, as the CLI does. */
  const turn = async (first: Effect.Effect<RunResult, { readonly code?: string | undefined; readonly message: string }, ChatTransport>) => {
    const effect = lock.withPermits(1)(first.pipe(
      Effect.catchIf(isBusy, () => orchestrator.run().pipe(Effect.retry({ while: isBusy, schedule: Schedule.spaced("500 millis"), times: 40 })))
    ))
    const done = run(effect)
    activeTurn = { orchestrator, done }
    const exit = await done
    if (activeTurn?.done === done) activeTurn = undefined
    if (Exit.isSuccess(exit)) {
      for (const listener of turnListeners) listener(exit.value)
    } else if (!Cause.hasInterruptsOnly(exit.cause)) {
      // The orchestrator has put the error in the chat store (the banner); a 401 asks for the token.
      api.unauthorized(Cause.squash(exit.cause))
    }
  }

  return {
    api,
    chatStore,
    agentStore,
    orchestrator,
    lock,
    run,
    send: (text) => turn(orchestrator.send(text)),
    retry: () => turn(orchestrator.run()),
    stop: async () => {
      if (activeTurn !== undefined) await run(activeTurn.orchestrator.stop)
      // A followed turn (not this page's): the server stops it, and the follow ends with its `finish`.
      else if (following !== undefined) await run(api.client.stopTurn(following).pipe(Effect.ignore))
    }
  }
}

const sessions = new Map<string, ChatSession>()

/** The session of an API (its token) and an agent, made once. */
export const sessionFor = (api: ConsoleApi, agent: string | undefined): ChatSession => {
  const key = `${api.options.baseUrl}\u0000${String(api.options.token ?? "")}\u0000${agent ?? ""}`
  let session = sessions.get(key)
  if (session === undefined || session.api !== api) {
    session = makeSession(api, agent)
    sessions.set(key, session)
  }
  return session
}

/**
 * Puts `chatId` in the chat store (the list gets it when it has messages) and re-syncs it from the
 * server's transcript: steers and wake answers included. A chat the server does not know (never
 * had a turn) keeps what this browser has of it. Resolves once the messages are in.
 */
export const openConversation = async (session: ChatSession, chatId: string): Promise<void> => {
  if (chatStore.getState().chatId !== chatId) {
    await session.stop()
    if (activeTurn !== undefined) await activeTurn.done
    chatStore.setState({ chatId, messages: [], error: null, failure: null, loading: false, streamingId: null })
    agentStore.getState().reset()
  }
  await resync(session)
  void follow(session, chatId)
}

/** The chat whose running turn this page follows (`follow`), for Stop. */
let following: string | undefined

/**
 * The chat's running turn, when the server has one (the page reloaded in the middle of an answer):
 * followed from its first chunk (`GET /api/chats/{chatId}/stream`, from whichever replica runs it),
 * its text growing in the store as it is written, then the stored transcript in its place. Under
 * the lock, as a turn of the page's own. Nothing runs: a 204, and nothing changes.
 */
export const follow = async (session: ChatSession, chatId: string): Promise<void> => {
  let draft: string | undefined
  const same = () => chatStore.getState().chatId === chatId
  const exit = await session.run(lock.withPermits(1)(Effect.suspend(() => {
    let shown = ""
    following = chatId
    return Stream.runForEach(session.api.client.resumeTurn(chatId), (chunk) =>
      Effect.sync(() => {
        if (!same() || chunk.type !== "text-delta" || chunk.delta === "") return
        if (draft === undefined) {
          draft = chatStore.getState().startStreaming({ role: "assistant", content: "", timestamp: Date.now() }).id
          chatStore.getState().setLoading(true)
        }
        shown += chunk.delta
        chatStore.getState().setStreamingContent(shown)
        agentStore.getState().setStatus("responding")
      })).pipe(
        Effect.ensuring(Effect.sync(() => {
          following = undefined
          if (draft === undefined || !same()) return
          chatStore.getState().finishStreaming(null)
          chatStore.getState().setLoading(false)
          agentStore.getState().setStatus("idle")
        }))
      )
  })))
  if (Exit.isFailure(exit)) session.api.unauthorized(Cause.squash(exit.cause))
  // What the turn stored (and a failed follow's stored state) comes from the transcript.
  if (draft !== undefined && same()) await resync(session)
}

/** The server's transcript in place of the chat store's messages, unless a turn is running. */
export const resync = async (session: ChatSession): Promise<void> => {
  const chatId = chatStore.getState().chatId
  const exit = await session.run(lock.withPermits(1)(Effect.gen(function*() {
    const { messages } = yield* session.api.client.chat.messages({ params: { chatId } })
    // Another conversation may have been opened meanwhile: this transcript is not its.
    if (chatStore.getState().chatId === chatId) chatStore.getState().replaceMessages(messages)
  })))
  if (Exit.isFailure(exit)) {
    const error = Cause.squash(exit.cause) as { readonly code?: unknown }
    if (error?.code !== "chat_not_found") session.api.unauthorized(error)
  }
}

export const ChatSessionContext = createContext<ChatSession | undefined>(undefined)

/** The chat page's session: its stores, orchestrator and lock (for the components inside the page). */
export const useChatSession = (): ChatSession => {
  const session = useContext(ChatSessionContext)
  if (session === undefined) throw new Error("useChatSession: outside the chat page")
  return session
}
