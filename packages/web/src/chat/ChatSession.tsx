/**
 * The chat's one agent loop, shared by the chat page's components (and the jobs views, through
 * `useChatSession`): the default tool registry (`transcribe_video`, reading a picked file's bytes:
 * `PickedFiles.ts`) and the orchestrator over the page's stores (`ChatStores.ts`) — the loop
 * `switchboard chat` runs, streamed. Nothing here is a second orchestrator: `send`, `retry` and
 * `stop` are its own `send`, `run` and `stop`, one turn at a time under `lock`. Opening a
 * conversation re-syncs its messages from the server's transcript (`openConversation`) and follows
 * its running turn, if it has one.
 */
import { ChatTransport, makeDefaultRegistry, makeOrchestrator, MediaTranscriber } from "@switchboard/client"
import type { AgentStore, ChatStore, Orchestrator, RunResult } from "@switchboard/client"
import { Cause, Effect, Exit, References, Schedule, Semaphore, Stream } from "effect"
import { createContext, useContext } from "react"
import type { ConsoleApi } from "../api/ConsoleApi.ts"
import { agentStore, chatStore, lock } from "./ChatStores.ts"
import { readPickedAsset } from "./PickedFiles.ts"


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
  /** Decides a server tool call that waits for approval; the continuation runs as a turn. */
  readonly decide: (approvalId: string, approved: boolean, reason?: string) => Promise<void>
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
    decide: (approvalId, approved, reason) => turn(orchestrator.decide(approvalId, approved, reason)),
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
