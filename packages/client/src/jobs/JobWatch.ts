/**
 * The client side of "ack now, steer later": one poll of
 * `GET /api/jobs?chatId=` drives every job surface. Each poll updates the jobs
 * store (a UI's dispatch cards and sub-agents panel read it) and reports what
 * changed as events; when a job settles (its status flips after the wake
 * turn), one re-sync of the transcript (`GET /api/chats/{chatId}/messages`)
 * replaces the chat store's messages and reports what the client had not
 * seen: each steer (a sub-agent's result) and the wake turn's answer. A wake
 * answer that asks for client tools is resumed by the orchestrator, like any
 * answer.
 *
 * What an event looks like on screen is the caller's: the terminal prints
 * lines and saves demos to files; a browser renders cards. So is deciding a
 * job parked on a call that needs approval (`waiting`): with the chat's
 * approval route, `ChatTransport.decide`.
 *
 * Re-syncs take the conversation lock that turns hold, so a steer shows
 * after the user's turn, never in the middle of it.
 */
import type { ChatMessage, JobRecord } from "@switchboard/domain"
import { JOBS_IDS_MAX, subagentResultOf } from "@switchboard/domain"
import { clientCallsWaiting } from "../chat/ApprovalDecisions.ts"
import { Effect } from "effect"
import type { Semaphore } from "effect"
import type { ApiClient } from "../api/ApiClient.ts"
import { describeApiFailure } from "../api/ApiFailure.ts"
import { allPages } from "../api/Pages.ts"
import type { ChatTransport } from "../chat/ChatTransport.ts"
import type { Orchestrator, RunResult } from "../chat/Orchestrator.ts"
import type { ChatStore } from "../stores/ChatStore.ts"
import type { JobsStore } from "./JobsStore.ts"

/** How often the jobs are polled while any runs. */
export const jobPollMs = 300

/** Failed polls in a row before the watch gives up. */
const maxPollFailures = 20

export type JobEvent =
  /** First seen (the dispatching turn's answer named it, or it was found running). */
  | { readonly type: "dispatched"; readonly job: JobRecord }
  /** Its activity line changed while it runs. */
  | { readonly type: "activity"; readonly job: JobRecord }
  /**
   * What it waits on changed while it runs: it parked on a sub-agent's call that needs the user's
   * approval (`job.waitingFor`, a new `approvalId`: decided with the chat's approval route, as a
   * turn's), or it waits no more (`job.waitingFor` absent: decided, here or elsewhere). Reported
   * once per approval, after the activity line.
   */
  | { readonly type: "waiting"; readonly job: JobRecord }
  /** It left `running` (done, error, cancelled): a re-sync follows. */
  | { readonly type: "settled"; readonly job: JobRecord }
  /** A sub-agent's result, as the re-sync found it in the transcript. */
  | { readonly type: "steer"; readonly message: ChatMessage }
  /** An assistant answer after a steer (the wake turn's), or the answer of a resumed wake turn. */
  | { readonly type: "answer"; readonly message: ChatMessage }
  /**
   * A poll failed (its listing, its re-sync, or the resumed wake answer's turn: a busy replica's
   * `Switchboard is busy (too many turns at once); retry in 3 s`); the watch goes on until
   * `maxPollFailures` in a row.
   */
  | { readonly type: "pollFailed"; readonly message: string; readonly error: unknown }

export interface JobWatchDeps {
  readonly client: ApiClient["Service"]
  readonly chatStore: ChatStore
  readonly orchestrator: Orchestrator
  /** Held by turns and re-syncs: one at a time. */
  readonly lock: Semaphore.Semaphore
  /** Updated on every poll; default: none. */
  readonly jobsStore?: JobsStore | undefined
  /** What the caller shows of each change; default: nothing. */
  readonly onEvent?: ((event: JobEvent) => Effect.Effect<void>) | undefined
}

export interface JobWatch {
  /** Jobs a turn of this session dispatched: watched even if they settle before the first poll. */
  readonly expect: (jobIds: ReadonlyArray<string>) => void
  /** Whether anything is being watched. */
  readonly watching: () => boolean
  /** One poll: events, the store, and the re-sync when a job settled. True while a watched job runs. */
  readonly poll: Effect.Effect<boolean, never, ChatTransport>
  /** Polls until no watched job runs. */
  readonly untilSettled: Effect.Effect<void, never, ChatTransport>
  /**
   * At the start of a session on an existing conversation: what arrived since
   * it was last seen (steers, wake answers) is re-synced and reported, and the
   * chat's jobs that still run are followed.
   */
  readonly catchUp: Effect.Effect<void, never, ChatTransport>
}

export const makeJobWatch = (deps: JobWatchDeps): JobWatch => {
  const { chatStore, client, lock, orchestrator } = deps
  const emit = deps.onEvent ?? (() => Effect.void)
  const seen = new Map<string, { status: JobRecord["status"]; activity: string; approvalId: string | undefined }>()
  const expected = new Set<string>()
  /**
   * Settled jobs whose result a listing brought (the store keeps it): the polls ask for no results
   * (`results=omit`: a demo's page is up to a MiB, every 300 ms while another job runs), and the
   * jobs that settled since are listed again by id, with their results (`ids=`), not every settled
   * job's again. A watch without a store (the CLI's) never asks for results: it shows them from the
   * transcript's steers.
   */
  const resultsHeld = new Set<string>()
  const wantsResults = deps.jobsStore !== undefined
  /** A job settled and its re-sync has not succeeded yet: every poll tries it until it does. */
  let resyncDue = false
  let failures = 0

  const expectJobsOf = (result: RunResult) => {
    for (const job of result.jobs) expected.add(job.id)
  }

  const resync = Effect.gen(function*() {
    const chatId = chatStore.getState().chatId
    const { messages } = yield* client.chat.messages({ params: { chatId } })
    const local = new Set(chatStore.getState().messages.map((m) => m.id))
    yield* Effect.sync(() => chatStore.getState().replaceMessages(messages))
    // The new steers, and the new answers after a steer (the wake turns'). Whether an answer follows
    // a steer is read from the whole transcript: a wake turn's steer may have come with an earlier
    // re-sync (stored before its wake turn ran). A user's message starts a turn the user has seen.
    let afterSteer = false
    for (const message of messages) {
      const fresh = !local.has(message.id)
      if (subagentResultOf(message) !== undefined) {
        afterSteer = true
        if (fresh) yield* emit({ type: "steer", message })
      } else if (message.role === "user") {
        afterSteer = false
      } else if (fresh && afterSteer && message.role === "assistant" && message.content !== "") {
        yield* emit({ type: "answer", message })
      }
    }
    // (Not for calls waiting for the user's approval: the server runs those, once decided.)
    if (clientCallsWaiting(messages).length > 0) {
      const result = yield* orchestrator.run()
      yield* emit({ type: "answer", message: result.message })
      expectJobsOf(result)
    }
  })

  const watching = () => resyncDue || expected.size > 0 || [...seen.values()].some((j) => j.status === "running")

  // Every page (a chat's jobs come a thousand, or 16 MiB of results, at a time).
  const listJobs = (chatId: string, results: "include" | "omit", ids?: ReadonlyArray<string>) =>
    allPages(
      (cursor) => client.jobs.list({ query: { chatId, results, ...(ids === undefined ? {} : { ids: ids.join(",") }), ...cursor } }),
      (page) => page.jobs
    ).pipe(
      Effect.tap((jobs) =>
        Effect.sync(() => {
          if (results === "include") for (const job of jobs) if (job.status !== "running") resultsHeld.add(job.id)
        })
      )
    )

  /**
   * The chat's jobs, with the results of those settled since the last listing that brought them,
   * into the store once: a job that just settled is never shown there without its result. A few
   * settled jobs (one poll's) are listed by id; many (a chat's first poll) in one listing of all.
   */
  const listLatest = (chatId: string) =>
    Effect.gen(function*() {
      const jobs = yield* listJobs(chatId, "omit")
      const missing = wantsResults ? jobs.filter((job) => job.status !== "running" && !resultsHeld.has(job.id)).map((job) => job.id) : []
      if (missing.length === 0) return jobs
      if (missing.length > JOBS_IDS_MAX) return yield* listJobs(chatId, "include")
      const settled = new Map((yield* listJobs(chatId, "include", missing)).map((job) => [job.id, job]))
      // A job listed by id has moved on no further than the listing of all (it had settled there).
      return jobs.map((job) => settled.get(job.id) ?? job)
    }).pipe(
      Effect.map((jobs) => ({ jobs })),
      Effect.tap(({ jobs }) => Effect.sync(() => deps.jobsStore?.getState().setJobs(jobs)))
    )

  const poll: JobWatch["poll"] = Effect.gen(function*() {
    const { jobs } = yield* listLatest(chatStore.getState().chatId)
    for (const job of jobs) {
      const before = seen.get(job.id)
      const watched = before !== undefined || expected.has(job.id) || job.status === "running"
      if (!watched) continue
      if (before === undefined) yield* emit({ type: "dispatched", job })
      if (job.activity !== "" && job.activity !== before?.activity && job.status === "running") {
        yield* emit({ type: "activity", job })
      }
      const approvalId = job.status === "running" ? job.waitingFor?.approvalId : undefined
      if (approvalId !== before?.approvalId && job.status === "running") yield* emit({ type: "waiting", job })
      if (job.status !== "running" && (before === undefined || before.status === "running")) {
        resyncDue = true
        yield* emit({ type: "settled", job })
      }
      expected.delete(job.id)
      seen.set(job.id, { status: job.status, activity: job.activity, approvalId })
    }
    if (resyncDue) {
      yield* lock.withPermits(1)(resync)
      resyncDue = false
    }
    failures = 0
    return watching()
  }).pipe(
    Effect.catch((error: unknown) =>
      describeApiFailure(error).pipe(
        Effect.flatMap((failure) => emit({ type: "pollFailed", message: failure.message, error })),
        // A server that stays away is given up on; its jobs go on there.
        Effect.as(++failures < maxPollFailures)
      )
    )
  )

  return {
    expect: (ids) => ids.forEach((id) => expected.add(id)),
    watching,
    poll,
    untilSettled: Effect.gen(function*() {
      while (watching() && (yield* poll)) yield* Effect.sleep(jobPollMs)
    }),
    catchUp: Effect.gen(function*() {
      if (chatStore.getState().messages.length === 0) return
      // Best effort: a server that does not know the chat (or is down) is the turn's to report.
      yield* lock.withPermits(1)(resync).pipe(Effect.timeout("10 seconds"), Effect.ignore)
      const { jobs } = yield* listLatest(chatStore.getState().chatId).pipe(
        Effect.timeout("10 seconds"),
        Effect.orElseSucceed(() => ({ jobs: [] as ReadonlyArray<JobRecord> }))
      )
      for (const job of jobs) if (job.status === "running") expected.add(job.id)
    })
  }
}
