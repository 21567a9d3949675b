/**
 * Job watching as a UI sees it: the one poll of `/api/jobs` fills the jobs store (the dispatch
 * cards find their job by `toolCallId`) and reports dispatch, activity and settling; when a job
 * settles, one re-sync of the transcript brings the steer and the wake answer, each reported once.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ChatMessage, JobRecord } from "@switchboard/domain"
import { buildSubagentSteer } from "@switchboard/domain"
import { Effect, Semaphore } from "effect"
import { ApiClient } from "../src/api/ApiClient.ts"
import { ChatTransport } from "../src/chat/ChatTransport.ts"
import { makeOrchestrator } from "../src/chat/Orchestrator.ts"
import { jobOfToolCall, makeJobsStore } from "../src/jobs/JobsStore.ts"
import type { JobEvent } from "../src/jobs/JobWatch.ts"
import { makeJobWatch } from "../src/jobs/JobWatch.ts"
import { ToolRegistry } from "../src/tools/ToolRegistry.ts"
import { makeStores } from "./support/Fakes.ts"
import { startFakeServer } from "./support/FakeServer.ts"

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
      let poll = 0
      const stores = makeStores()
      const chatId = stores.chatStore.getState().chatId
      const server = yield* startFakeServer((request) => {
        if (request.path === `/api/jobs?chatId=${chatId}`) return { json: { jobs: polls[Math.min(poll++, polls.length - 1)] } }
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
})
