/**
 * The client side of "ack now, steer later" for `switchboard chat`: one poll
 * of `GET /api/jobs?chatId=` drives every job surface —
 * - a dispatch card per job (stderr) the first time it is seen running,
 * - its live activity line (stderr) whenever it changes,
 * - when a job settles (its status flips after the wake turn), one re-sync of
 *   the transcript (`GET /api/chats/{chatId}/messages`) into the chat store,
 *   printing what the client had not seen: each steer's result (a research
 *   brief with its sources; a demo or a figure saved to a file whose path is
 *   printed) and the wake turn's answer (stdout). A wake answer that asks for
 *   client tools is resumed by the orchestrator, like any answer.
 *
 * Re-syncs take the conversation lock that turns hold, so in the interactive
 * mode a steer shows after the user's turn, never in the middle of it.
 */
import type { ChatMessage, DemoResult, JobRecord, ResearchResult, VisualResult } from "@switchboard/domain"
import { isSubagentFailure, subagentArtifactOf, subagentResultOf, unansweredToolCalls } from "@switchboard/domain"
import { Console, Effect } from "effect"
import type { Semaphore } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { ApiClient } from "../api/ApiClient.ts"
import type { ChatTransport, ChatTransportError } from "../chat/ChatTransport.ts"
import type { Orchestrator } from "../chat/Orchestrator.ts"
import type { ChatStore } from "../stores/ChatStore.ts"

/** How often the jobs are polled while any runs. */
export const jobPollMs = 300

/** Failed polls in a row before the watch gives up. */
const maxPollFailures = 20

const shortId = (id: string) => id.replace(/^job_/, "").slice(0, 8)
const label = (job: Pick<JobRecord, "id" | "kind">) => `[${job.kind} ${shortId(job.id)}]`

/** What a steer's artifact becomes on the terminal (and on disk, for demos and figures). */
export const describeSteer = (message: ChatMessage, artifactsDir: string): string => {
  const meta = subagentResultOf(message)
  const artifact = subagentArtifactOf(message)
  if (meta === undefined || artifact === undefined) return message.content
  const head = `── ${meta.kind} result ${label({ id: meta.jobId, kind: meta.kind })} ──`
  if (isSubagentFailure(artifact.kind, artifact.result)) return `${head}\n${message.content}`
  switch (artifact.kind) {
    case "research": {
      const r = artifact.result as ResearchResult
      const sources = r.sources.length === 0
        ? "Sources: (none)"
        : `Sources:\n${r.sources.map((s) => `  - ${s.title === "" ? s.url : `${s.title} <${s.url}>`}`).join("\n")}`
      return `${head}\n${r.brief}\n${sources}`
    }
    case "demo": {
      const r = artifact.result as DemoResult
      const file = save(artifactsDir, `${meta.jobId}.html`, r.html)
      return `${head}\nDemo "${r.title}"${r.tested ? " (tested in a headless browser)" : ""} saved to ${file}${
        r.notes ? `\nNotes: ${r.notes}` : ""
      }`
    }
    case "visual": {
      const r = artifact.result as VisualResult
      const file = save(artifactsDir, `${meta.jobId}.svg`, r.svg)
      return `${head}\nFigure saved to ${file}${r.notes ? `\nNotes: ${r.notes}` : ""}`
    }
  }
}

const save = (dir: string, name: string, content: string) => {
  fs.mkdirSync(dir, { recursive: true })
  const file = path.join(dir, name)
  fs.writeFileSync(file, content)
  return file
}

export interface JobWatchDeps {
  readonly client: ApiClient["Service"]
  readonly chatStore: ChatStore
  readonly orchestrator: Orchestrator
  /** Held by turns and re-syncs: one at a time. */
  readonly lock: Semaphore.Semaphore
  readonly artifactsDir: string
}

export interface JobWatch {
  /** Jobs a turn of this session dispatched: watched even if they settle before the first poll. */
  readonly expect: (jobIds: ReadonlyArray<string>) => void
  /** Whether anything is being watched. */
  readonly watching: () => boolean
  /** One poll: cards, activity, and the re-sync when a job settled. True while a watched job runs. */
  readonly poll: Effect.Effect<boolean, never, ChatTransport>
  /** Polls until no watched job runs. */
  readonly untilSettled: Effect.Effect<void, never, ChatTransport>
  /**
   * At the start of a run on an existing conversation: what arrived since the
   * last run (steers, wake answers) is re-synced and shown, and the chat's
   * jobs that still run are followed.
   */
  readonly catchUp: Effect.Effect<void, never, ChatTransport>
}

export const makeJobWatch = (deps: JobWatchDeps): JobWatch => {
  const { chatStore, client, lock, orchestrator } = deps
  const seen = new Map<string, { status: JobRecord["status"]; activity: string }>()
  const expected = new Set<string>()
  let failures = 0

  const resync = Effect.gen(function*() {
    const chatId = chatStore.getState().chatId
    const { messages } = yield* client.chat.messages({ params: { chatId } })
    const local = new Set(chatStore.getState().messages.map((m) => m.id))
    const fresh = messages.filter((m) => !local.has(m.id))
    yield* Effect.sync(() => chatStore.getState().replaceMessages(messages))
    // Steers, and the answers after them (the wake turns'); what came before them the user has seen.
    let afterSteer = false
    for (const message of fresh) {
      if (subagentResultOf(message) !== undefined) {
        afterSteer = true
        yield* Console.log(describeSteer(message, deps.artifactsDir))
      } else if (afterSteer && message.role === "assistant" && message.content !== "") {
        yield* Console.log(message.content)
      }
    }
    if (unansweredToolCalls(messages).length > 0 && messages.at(-1)?.role === "assistant") {
      const result = yield* orchestrator.run()
      yield* Console.log(result.message.content)
      for (const job of result.jobs) expected.add(job.id)
    }
  })

  const poll: JobWatch["poll"] = Effect.gen(function*() {
    const chatId = chatStore.getState().chatId
    const { jobs } = yield* client.jobs.list({ query: { chatId } })
    let settledNow = false
    for (const job of jobs) {
      const before = seen.get(job.id)
      const watched = before !== undefined || expected.has(job.id) || job.status === "running"
      if (!watched) continue
      if (before === undefined) {
        yield* Console.error(`${label(job)} dispatched${job.status === "running" ? ", running in the background" : ""}`)
      }
      if (job.activity !== "" && job.activity !== before?.activity && job.status === "running") {
        yield* Console.error(`${label(job)} ${job.activity}`)
      }
      if (job.status !== "running" && (before === undefined || before.status === "running")) {
        settledNow = true
        yield* Console.error(`${label(job)} ${job.status}`)
      }
      expected.delete(job.id)
      seen.set(job.id, { status: job.status, activity: job.activity })
    }
    if (settledNow) yield* lock.withPermits(1)(resync)
    failures = 0
    return [...seen.values()].some((j) => j.status === "running") || expected.size > 0
  }).pipe(
    Effect.catch((error: unknown) =>
      Console.error(`switchboard: cannot follow the jobs: ${describe(error)}`).pipe(
        // A server that stays away is given up on; its jobs go on there (`switchboard jobs` shows them).
        Effect.as(++failures < maxPollFailures)
      )
    )
  )

  const watching = () => expected.size > 0 || [...seen.values()].some((j) => j.status === "running")
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
      const { jobs } = yield* client.jobs.list({ query: { chatId: chatStore.getState().chatId } }).pipe(
        Effect.timeout("10 seconds"),
        Effect.orElseSucceed(() => ({ jobs: [] as ReadonlyArray<JobRecord> }))
      )
      for (const job of jobs) if (job.status === "running") expected.add(job.id)
    })
  }
}

const describe = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)

export type { ChatTransportError }
