/**
 * Job watching as a UI sees it: the one poll of `/api/jobs` fills the jobs store (the dispatch
 * cards find their job by `toolCallId`) and reports dispatch, activity and settling; when a job
 * settles, one re-sync of the transcript brings the steer and the wake answer, each reported once.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ChatMessage, JobRecord } from "@switchboard/domain"
import { buildSubagentSteer, JOBS_IDS_MAX } from "@switchboard/domain"
import { Effect, Semaphore } from "effect"
import { ApiClient } from "../src/api/ApiClient.ts"
import { ChatTransport } from "../src/chat/ChatTransport.ts"
import { makeOrchestrator } from "../src/chat/Orchestrator.ts"
import { jobOfToolCall, makeJobsStore } from "../src/jobs/JobsStore.ts"
import type { JobsStore } from "../src/jobs/JobsStore.ts"
import type { JobEvent } from "../src/jobs/JobWatch.ts"
import { makeJobWatch } from "../src/jobs/JobWatch.ts"
import { ToolRegistry } from "../src/tools/ToolRegistry.ts"
import { makeStores } from "./support/Fakes.ts"
import { startFakeServer } from "./support/FakeServer.ts"
import type { Reply } from "./support/FakeServer.ts"

const job = (status: JobRecord["status"], activity: string): JobRecord => ({
  id: "job_1",
  kind: "research",
  chatId: "chat_of_the_store",
  toolCallId: "call_r",
  status,
  activity,
  createdAt: "2026-12-01T00:00:00.000Z",
  updatedAt: "2026-12-01T00:00:01.000Z"
})

const said = (id: string, role: "user" | "assistant", content: string, timestamp: number): ChatMessage => ({ id, role, content, timestamp })

/** The user's message that starts the watched chats. */
const asked = said("m_user", "user", "research", 1)

const jobOf = (id: string, status: JobRecord["status"]): JobRecord => ({ ...job(status, ""), id, toolCallId: `call_${id}` })

/** A done job's steer (a research brief). */
const steerOf = (jobId: string, brief: string, timestamp: number) => buildSubagentSteer(jobOf(jobId, "done"), { brief, sources: [] }, timestamp)

/**
 * The fake server's `/api/jobs?chatId=`: each poll (a listing with `results=omit`) answers the next
 * of `polls` (then the last), its results left out as the server leaves them; a listing with
 * results answers what the last poll did, whole, or only the jobs its `ids` name. `polls()` counts
 * the polls so far; `listings` names each listing: `omit`, `include`, or `include:<ids>`.
 */
const fakeJobs = (chatId: string, polls: ReadonlyArray<ReadonlyArray<JobRecord>>) => {
  let made = 0
  const listings: Array<string> = []
  return {
    polls: () => made,
    listings,
    answer: (path: string) => {
      const query = new URLSearchParams(path.split("?")[1] ?? "")
      if (!path.startsWith("/api/jobs?") || query.get("chatId") !== chatId) return undefined
      const omit = query.get("results") === "omit"
      const ids = query.get("ids")?.split(",")
      listings.push(omit ? "omit" : ids === undefined ? "include" : `include:${ids.join(",")}`)
      const jobs = polls[Math.max(0, Math.min(omit ? made++ : made - 1, polls.length - 1))]!
        .filter((job) => ids === undefined || ids.includes(job.id))
      return { json: { jobs: omit ? jobs.map(({ result: _, ...rest }) => rest) : jobs } }
    }
  }
}

/**
 * A watch of a chat whose store holds `user`, against a fake server whose job list is each of
 * `polls` in turn (then the last), whose transcript is `transcript(n, poll)` at the n-th re-sync and
 * whose chat route (a resumed wake answer's turn) answers `turn(n)` at the n-th turn; its events
 * collected, named.
 */
const watchOn = (
  user: ChatMessage,
  polls: ReadonlyArray<ReadonlyArray<JobRecord>>,
  transcript: (resync: number, poll: number) => { readonly status?: number; readonly json: unknown },
  jobsStore?: JobsStore,
  turn?: (n: number) => Reply
) =>
  Effect.gen(function*() {
    const stores = makeStores()
    const chatId = stores.chatStore.getState().chatId
    stores.chatStore.getState().addMessage(user)
    const jobs = fakeJobs(chatId, polls)
    let resyncs = 0
    let turns = 0
    const server = yield* startFakeServer((request) => {
      const listing = jobs.answer(request.path)
      if (listing !== undefined) return listing
      if (request.path === `/api/chats/${chatId}/messages`) return transcript(++resyncs, jobs.polls())
      if (request.path === "/api/agent/chat" && turn !== undefined) return turn(++turns)
      return { status: 404, json: { error: "not found", code: "not_found" } }
    })
    const events: Array<JobEvent> = []
    const client = yield* Effect.service(ApiClient).pipe(Effect.provide(ApiClient.layer({ baseUrl: server.url })))
    const watch = makeJobWatch({
      client,
      chatStore: stores.chatStore,
      orchestrator: makeOrchestrator({ ...stores, registry: new ToolRegistry() }),
      lock: yield* Semaphore.make(1),
      jobsStore,
      onEvent: (event) => Effect.sync(() => events.push(event))
    })
    const named = () => events.map((e) => e.type === "answer" || e.type === "steer" ? `${e.type}:${e.message.id}` : e.type === "pollFailed" ? e.type : `${e.type}:${e.job.id}`)
    return { watch, named, events, stores, listings: jobs.listings, transport: ChatTransport.layer({ baseUrl: server.url }) }
  })

describe("JobWatch", () => {
  it.live("polls into the jobs store, reports each change once, and re-syncs the steer and the wake answer", () =>
    Effect.gen(function*() {
      const result = { brief: "Sigma.js renders graphs in WebGL.", sources: [{ url: "https://example.org/sigma", title: "Sigma" }] }
      const user: ChatMessage = { id: "m_user", role: "user", content: "research sigma", timestamp: 1 }
      const dispatch: ChatMessage = {
        id: "m_dispatch",
        role: "assistant",
        content: "On it.",
        toolCalls: [{ id: "call_r", name: "research", args: { query: "sigma" } }],
        timestamp: 2
      }
      const ack: ChatMessage = {
        id: "m_ack",
        role: "tool",
        content: "{}",
        toolResult: { toolCallId: "call_r", name: "research", result: { jobId: "job_1", status: "running" } },
        timestamp: 3
      }
      const steer = buildSubagentSteer(job("done", "done: 1 sources"), result, 4)
      const wake: ChatMessage = { id: "m_wake", role: "assistant", content: "Sigma uses WebGL.", timestamp: 5 }
      const polls = [[job("running", "")], [job("running", "web_search: \"sigma\"")], [job("done", "done: 1 sources")]]
      const stores = makeStores()
      const chatId = stores.chatStore.getState().chatId
      const jobs = fakeJobs(chatId, polls)
      const server = yield* startFakeServer((request) => {
        const listing = jobs.answer(request.path)
        if (listing !== undefined) return listing
        if (request.path === `/api/chats/${chatId}/messages`) return { json: { messages: [user, dispatch, ack, steer, wake] } }
        return { status: 404, json: { error: "not found", code: "not_found" } }
      })
      for (const message of [user, dispatch, ack]) stores.chatStore.getState().addMessage(message)
      const jobsStore = makeJobsStore()
      const events: Array<JobEvent> = []
      const client = yield* Effect.service(ApiClient).pipe(Effect.provide(ApiClient.layer({ baseUrl: server.url })))
      const watch = makeJobWatch({
        client,
        chatStore: stores.chatStore,
        orchestrator: makeOrchestrator({ ...stores, registry: new ToolRegistry() }),
        lock: yield* Semaphore.make(1),
        jobsStore,
        onEvent: (event) => Effect.sync(() => events.push(event))
      })
      watch.expect(["job_1"])
      assert.isTrue(watch.watching())

      yield* watch.untilSettled.pipe(Effect.provide(ChatTransport.layer({ baseUrl: server.url })))

      assert.deepStrictEqual(events.map((e) => e.type), ["dispatched", "activity", "settled", "steer", "answer"])
      assert.strictEqual(jobOfToolCall(jobsStore.getState(), "call_r")?.status, "done")
      assert.deepStrictEqual(stores.chatStore.getState().messages.map((m) => m.id), ["m_user", "m_dispatch", "m_ack", steer.id, "m_wake"])
      const answer = events.at(-1)
      assert.strictEqual(answer?.type === "answer" ? answer.message.content : undefined, "Sigma uses WebGL.")
      assert.isFalse(watch.watching())
    }))

  it.live("a re-sync that fails is made again by the next poll: the steer and the answer are not lost", () =>
    Effect.gen(function*() {
      const steer = steerOf("job_1", "B", 4)
      const wake = said("m_wake", "assistant", "Answer after steer", 5)
      const { named, stores, transport, watch } = yield* watchOn(
        asked,
        [[jobOf("job_1", "running")], [jobOf("job_1", "done")]],
        // The first re-sync meets a replica that is not ready.
        (resync) => resync === 1 ? { status: 503, json: { error: "not ready", code: "not_ready" } } : { json: { messages: [asked, steer, wake] } }
      )
      watch.expect(["job_1"])

      yield* watch.untilSettled.pipe(Effect.provide(transport))

      assert.deepStrictEqual(named(), ["dispatched:job_1", "settled:job_1", "pollFailed", `steer:${steer.id}`, "answer:m_wake"])
      assert.deepStrictEqual(stores.chatStore.getState().messages.map((m) => m.id), ["m_user", steer.id, "m_wake"])
      assert.isFalse(watch.watching())
    }))

  it.live("a resumed wake answer refused by a busy replica (503 overloaded) says busy, and the next poll resumes it", () =>
    Effect.gen(function*() {
      const steer = steerOf("job_1", "B", 2)
      // The wake turn's answer asks for a client tool: the watch resumes it with a turn of its own.
      const wake: ChatMessage = {
        ...said("m_wake", "assistant", "Let me look.", 3),
        toolCalls: [{ id: "call_client", name: "lookup", args: {} }]
      }
      const { events, named, stores, transport, watch } = yield* watchOn(
        asked,
        [[jobOf("job_1", "running")], [jobOf("job_1", "done")]],
        () => ({ json: { messages: [asked, steer, wake] } }),
        undefined,
        (n) =>
          n === 1
            ? { status: 503, json: { error: "Too many turns in flight", code: "overloaded", retryAfter: 2 }, headers: { "retry-after": "2" } }
            : { json: { content: "Found it.", messageId: "m_after" } }
      )
      watch.expect(["job_1"])

      yield* watch.untilSettled.pipe(Effect.provide(transport))

      const failed = events.find((e) => e.type === "pollFailed")
      assert.strictEqual(failed?.type === "pollFailed" ? failed.message : undefined, "Switchboard is busy (too many turns at once); retry in 2 s")
      assert.deepStrictEqual(named(), [
        "dispatched:job_1", "settled:job_1", `steer:${steer.id}`, "answer:m_wake", "pollFailed", "answer:m_after"
      ])
      assert.strictEqual(stores.chatStore.getState().messages.at(-1)?.content, "Found it.")
      assert.isFalse(watch.watching())
    }))

  it.live("a wake answer whose steer came with an earlier re-sync is reported (two jobs settling close together)", () =>
    Effect.gen(function*() {
      const steerA = steerOf("A", "A", 2)
      const wakeA = said("m_wakeA", "assistant", "About A", 3)
      const steerB = steerOf("B", "B", 4)
      const wakeB = said("m_wakeB", "assistant", "About B", 5)
      const later = said("m_later", "user", "thanks", 6)
      const other = said("m_other", "assistant", "Another tab's answer", 7)
      const { listings, named, transport, watch } = yield* watchOn(
        asked,
        [[jobOf("A", "running"), jobOf("B", "running")], [jobOf("A", "done"), jobOf("B", "running")], [jobOf("A", "done"), jobOf("B", "done")]],
        // When A settles, B's steer is stored and its wake turn runs; when B settles, another
        // client's turn (not a wake's) followed it.
        (_, poll) => ({ json: { messages: poll <= 2 ? [asked, steerA, wakeA, steerB] : [asked, steerA, wakeA, steerB, wakeB, later, other] } })
      )
      watch.expect(["A", "B"])

      yield* watch.untilSettled.pipe(Effect.provide(transport))

      assert.deepStrictEqual(named(), [
        "dispatched:A", "dispatched:B", "settled:A", `steer:${steerA.id}`, "answer:m_wakeA", `steer:${steerB.id}`,
        "settled:B", "answer:m_wakeB"
      ])
      assert.notInclude(listings, "include", "a watch without a jobs store (the CLI's) never asks for results")
    }))

  it.live("polls ask for no results; a job's result is listed once, when it settles, and the store keeps it", () =>
    Effect.gen(function*() {
      const resultA = { brief: "A's brief", sources: [] }
      const resultB = { brief: "B's brief", sources: [] }
      const done = (id: string, result: NonNullable<JobRecord["result"]>): JobRecord => ({ ...jobOf(id, "done"), result })
      const jobsStore = makeJobsStore()
      const { listings, transport, watch } = yield* watchOn(
        asked,
        [
          [jobOf("A", "running"), jobOf("B", "running")],
          [done("A", resultA), jobOf("B", "running")],
          [done("A", resultA), { ...jobOf("B", "running"), activity: "web_search: \"b\"" }],
          [done("A", resultA), done("B", resultB)]
        ],
        () => ({ json: { messages: [asked, steerOf("A", "A", 2), steerOf("B", "B", 3)] } }),
        jobsStore
      )
      watch.expect(["A", "B"])
      const resultOf = (id: string) => jobsStore.getState().jobs.find((j) => j.id === id)?.result
      const shownWithout: Array<string> = []
      jobsStore.subscribe(({ jobs }) => jobs.forEach((j) => j.status !== "running" && j.result === undefined && shownWithout.push(j.id)))

      const poll = (times: number) => Effect.repeat(watch.poll, { times: times - 1 }).pipe(Effect.provide(transport))
      yield* poll(3)
      assert.deepStrictEqual(listings, ["omit", "omit", "include:A", "omit"])
      assert.deepStrictEqual(resultOf("A"), resultA, "kept through the poll that did not list it")
      yield* poll(1)
      assert.deepStrictEqual(listings, ["omit", "omit", "include:A", "omit", "omit", "include:B"], "A's result is not asked for again")
      assert.deepStrictEqual([resultOf("A"), resultOf("B")], [resultA, resultB])
      assert.deepStrictEqual(shownWithout, [], "a settled job is never in the store without its result")
      assert.isFalse(watch.watching())
    }))

  it.live("a first poll that finds more settled jobs than one listing names by id lists them all with their results, once", () =>
    Effect.gen(function*() {
      const settled = Array.from({ length: JOBS_IDS_MAX + 1 }, (_, i): JobRecord => ({
        ...jobOf(`S${i}`, "done"),
        result: { brief: `brief ${i}`, sources: [] }
      }))
      const jobsStore = makeJobsStore()
      const { listings, transport, watch } = yield* watchOn(asked, [settled], () => ({ json: { messages: [asked] } }), jobsStore)
      yield* Effect.repeat(watch.poll, { times: 1 }).pipe(Effect.provide(transport))
      assert.deepStrictEqual(listings, ["omit", "include", "omit"])
      assert.strictEqual(jobsStore.getState().jobs.filter((job) => job.result !== undefined).length, JOBS_IDS_MAX + 1)
    }))

  it.live("a parked job's approval is reported once, a new approval of the same call again, and the end of its wait", () =>
    Effect.gen(function*() {
      const parkedOn = (approvalId: string): JobRecord => ({
        ...jobOf("P", "running"),
        activity: "waiting for approval: shop__refund",
        waitingFor: { approvalId, toolName: "shop__refund", input: { order: 1 } }
      })
      const { events, named, transport, watch } = yield* watchOn(
        asked,
        [
          [jobOf("P", "running")],
          [parkedOn("apr_1")],
          [parkedOn("apr_1")],
          // Decided; parked again on the same tool before a poll saw it work: the activity line is the same.
          [parkedOn("apr_2")],
          [{ ...jobOf("P", "running"), activity: "shop__refund" }],
          [jobOf("P", "done")]
        ],
        () => ({ json: { messages: [asked, steerOf("P", "P", 2)] } })
      )
      watch.expect(["P"])

      yield* watch.untilSettled.pipe(Effect.provide(transport))

      assert.deepStrictEqual(named(), [
        "dispatched:P",
        "activity:P",
        "waiting:P",
        "waiting:P",
        "activity:P",
        "waiting:P",
        "settled:P",
        `steer:${steerOf("P", "P", 2).id}`
      ])
      const waits = events.flatMap((e) => e.type === "waiting" ? [e.job.waitingFor?.approvalId] : [])
      assert.deepStrictEqual(waits, ["apr_1", "apr_2", undefined])
    }))
})
