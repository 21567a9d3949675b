/**
 * The chat's jobs while it is open: the client package's job watch (the CLI's own poll of
 * `GET /api/jobs?chatId=…`, its events and its re-sync of the transcript) run as one fiber per
 * open chat, feeding the client's jobs store, which the dispatch cards and the sub-agents panel
 * read through React context. A job parked on a call that needs approval is decided here too
 * (`decide`: the chat's approval route, as the CLI decides it). See JobViews.tsx for how the chat
 * page plugs in.
 */
import type { JobEvent, JobsStore, Orchestrator } from "@switchboard/client"
import { ChatTransport, ChatTransportError, jobPollMs, makeJobsStore, makeJobWatch } from "@switchboard/client"
import type { ChatStore } from "@switchboard/client"
import { Cause, Effect, Exit, Fiber, Layer } from "effect"
import type { Semaphore } from "effect"
import type { ReactNode } from "react"
import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState } from "react"
import type { ConsoleApi } from "../api/ConsoleApi.ts"

/**
 * How often the jobs are polled while none is running or awaited: new jobs show within this. Not at
 * all while the tab is hidden (and none runs): at once when it is shown again.
 */
export const idlePollMs = 2_000

/**
 * The open chat as the chat page holds it: the watch re-syncs `chatStore` from the transcript when
 * a job settles (the steer and the wake answer appear in it), resumes a wake answer that asks for
 * client tools with `orchestrator`, and takes `lock` — which the chat page's turns must hold too —
 * so that a re-sync never lands in the middle of a turn.
 */
export interface JobsChatTarget {
  readonly chatStore: ChatStore
  readonly orchestrator: Orchestrator
  readonly lock: Semaphore.Semaphore
}

/** Provided by the chat page around `<JobsProvider>`: without it there is nothing to re-sync, and nothing is polled. */
export const JobsChatContext = createContext<JobsChatTarget | undefined>(undefined)

export type JobEventListener = (event: JobEvent) => void

/**
 * What came of deciding a parked job's approval: `sent` (202: the job resumes on the server),
 * `decided` (409 `approval_decided`: decided already — in another tab, by the CLI, or by the
 * timeout), `failed` (not sent: the reason).
 */
export type JobDecision =
  | { readonly type: "sent" }
  | { readonly type: "decided" }
  | { readonly type: "failed"; readonly message: string }

interface JobsContextValue {
  readonly store: JobsStore
  /** Polls now (a dispatch card whose job the store does not know yet). */
  readonly kick: () => void
  readonly subscribe: (listener: JobEventListener) => () => void
  /** The last poll's failure, `undefined` once one succeeds. */
  readonly pollError: string | undefined
  /** Decides the approval a job of the open chat waits on (`job.waitingFor.approvalId`), then polls. */
  readonly decide: (approvalId: string, approved: boolean, reason?: string) => Promise<JobDecision>
}

const JobsContext = createContext<JobsContextValue | undefined>(undefined)

/** A store that stays empty: the views outside a provider render their quiet states. */
const emptyStore = makeJobsStore()
const noProvider: JobsContextValue = {
  store: emptyStore,
  kick: () => {},
  subscribe: () => () => {},
  pollError: undefined,
  decide: () => Promise.resolve({ type: "failed", message: "no chat is open" })
}

export const useJobsContext = (): JobsContextValue => useContext(JobsContext) ?? noProvider

/**
 * Hears every job event of the open chat (`dispatched`, `activity`, `waiting`, `settled`, then `steer` and
 * `answer` once the re-sync put them in the chat store, `pollFailed`). The latest `listener` is
 * called; it need not be stable.
 */
export const useJobEvents = (listener: JobEventListener): void => {
  const { subscribe } = useJobsContext()
  const latest = useRef(listener)
  latest.current = listener
  useEffect(() => subscribe((event) => latest.current(event)), [subscribe])
}

export interface JobsProviderProps {
  readonly chatId: string | undefined
  readonly api: ConsoleApi
  readonly children: ReactNode
}

export function JobsProvider({ api, chatId, children }: JobsProviderProps) {
  const target = useContext(JobsChatContext)
  const [store] = useState(makeJobsStore)
  const [pollError, setPollError] = useState<string | undefined>(undefined)
  const listeners = useRef(new Set<JobEventListener>())
  const wake = useRef<() => void>(() => {})
  const transport = useMemo(() => ChatTransport.layerNoDeps.pipe(Layer.provide(api.layer)), [api])

  useEffect(() => {
    store.getState().clear()
    setPollError(undefined)
    if (chatId === undefined) return
    if (target === undefined) {
      if (import.meta.env.DEV) console.warn("JobsProvider: no JobsChatContext around it, so no job is followed (JobViews.tsx)")
      return
    }
    const watch = makeJobWatch({
      client: api.client,
      chatStore: target.chatStore,
      orchestrator: target.orchestrator,
      lock: target.lock,
      jobsStore: store,
      onEvent: (event) =>
        Effect.sync(() => {
          if (event.type === "pollFailed") {
            setPollError(event.message)
            // A token the server no longer takes: the console asks for it again.
            api.unauthorized(event.error)
          }
          for (const listener of listeners.current) listener(event)
        })
    })

    // The jobs of the first listing are the chat's past (the transcript has their results, or they
    // still run and the watch follows them). A job that appears later is this session's: expected,
    // so that its settling re-syncs even if no poll saw it running. The store is set before the
    // watch looks at the listing, so the expectation is in place for that same poll.
    let known: Set<string> | undefined
    const unsubscribe = store.subscribe(({ jobs }) => {
      if (known === undefined) {
        known = new Set(jobs.map((job) => job.id))
        setPollError(undefined)
        return
      }
      const fresh = jobs.filter((job) => !known!.has(job.id)).map((job) => job.id)
      fresh.forEach((id) => known!.add(id))
      if (fresh.length > 0) watch.expect(fresh)
      setPollError(undefined)
    })

    /** A wake since the last poll (a card's kick, a decision, the tab shown again): poll whatever else holds. */
    let asked = false
    const pause = (ms: number) =>
      Effect.raceFirst(
        Effect.sleep(ms),
        Effect.callback<void>((resume) => {
          wake.current = () => {
            asked = true
            resume(Effect.void)
          }
        })
      )
    const loop = Effect.gen(function*() {
      for (;;) {
        // A tab in the background with nothing running or awaited asks nothing: a thousand idle
        // tabs would otherwise list their jobs every 2 s. Shown again, it polls at once.
        const idleInBackground = document.visibilityState === "hidden" && !watch.watching() && !asked
        asked = false
        // The chat page may still be switching its store to this chat: poll only the chat in view.
        if (target.chatStore.getState().chatId === chatId && !idleInBackground) yield* watch.poll
        yield* pause(watch.watching() ? jobPollMs : idlePollMs)
      }
    })
    const fiber = Effect.runFork(loop.pipe(Effect.provide(transport)))
    const onVisibility = () => {
      if (document.visibilityState === "visible") wake.current()
    }
    document.addEventListener("visibilitychange", onVisibility)
    return () => {
      document.removeEventListener("visibilitychange", onVisibility)
      unsubscribe()
      wake.current = () => {}
      Effect.runFork(Fiber.interrupt(fiber))
    }
  }, [api, chatId, store, target, transport])

  const decide = useCallback<JobsContextValue["decide"]>(async (approvalId, approved, reason) => {
    if (chatId === undefined) return { type: "failed", message: "no chat is open" }
    const decision = { approved, ...(reason === undefined || reason === "" ? {} : { reason }) }
    const exit = await Effect.runPromiseExit(
      Effect.flatMap(Effect.service(ChatTransport), (chat) => chat.decide(chatId, approvalId, decision)).pipe(Effect.provide(transport))
    )
    // The job's record says what came of it (running again, or still waiting): look now.
    wake.current()
    if (Exit.isSuccess(exit)) return { type: "sent" }
    const error = exit.cause.reasons.find(Cause.isFailReason)?.error
    if (error instanceof ChatTransportError && error.code === "approval_decided") return { type: "decided" }
    api.unauthorized(error)
    return { type: "failed", message: error instanceof ChatTransportError ? error.message : String(Cause.squash(exit.cause)) }
  }, [api, chatId, transport])

  const value = useMemo<JobsContextValue>(() => ({
    store,
    kick: () => wake.current(),
    subscribe: (listener) => {
      listeners.current.add(listener)
      return () => void listeners.current.delete(listener)
    },
    pollError,
    decide
  }), [store, pollError, decide])

  return <JobsContext value={value}>{children}</JobsContext>
}
