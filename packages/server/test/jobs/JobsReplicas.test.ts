/**
 * Two server replicas (each its own runner, wake pipeline and, on
 * PostgreSQL, its own pool and listener) on one database: every job is run
 * once, by one of them; every steer is delivered once; the steers of one
 * chat never fire at once even when both replicas race for them, while
 * another chat's go on.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ChatMessage, JobRecord, ProviderChatParams } from "@switchboard/domain"
import { subagentResultOf } from "@switchboard/domain"
import { Effect, Layer } from "effect"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { makeFakeSubagents, researchResult } from "../support/FakeSubagents.ts"
import { eventually, teacher, user } from "../support/JobsHelpers.ts"
import { backend, makeTestDatabase } from "../support/TestDatabase.ts"
import { baseUrl, layerReplica, postJsonAt, requestAt } from "../support/TestServer.ts"

const steerOf = (params: ProviderChatParams) => {
  const last = params.messages.at(-1)
  return last === undefined ? undefined : subagentResultOf(last)
}

describe(`two replicas on one ${backend} database`, () => {
  it.live("each job runs once; each steer is delivered once; one wake per chat at a time", () =>
    Effect.gen(function*() {
      const db = yield* makeTestDatabase
      const fake = makeFakeProvider()
      const subagents = makeFakeSubagents()
      const memoMap = yield* Layer.makeMemoMap
      const scope = yield* Effect.scope
      const replica = () =>
        Layer.buildWithMemoMap(
          // No replica dies here: a lease long enough that a runner starved of CPU on a loaded machine is
          // never taken for dead (taking a job over after its lease expired is KilledReplica's to test).
          layerReplica(fake.layer, db.client(), { subagents: subagents.layer, jobs: { leaseMs: 20_000 } }),
          memoMap,
          scope
        )
      const [a, b] = yield* Effect.all([replica(), replica()], { concurrency: 2 })
      const urls = [yield* baseUrl.pipe(Effect.provide(a)), yield* baseUrl.pipe(Effect.provide(b))]

      const inFlight = new Map<string, number>()
      const most = new Map<string, number>()
      const chatOf = (params: ProviderChatParams) => params.messages[0]!.id.split("/")[0]!
      fake.answerWith((params) => {
        const steer = steerOf(params)
        if (steer === undefined) return Effect.succeed(teacher(params))
        const chat = chatOf(params)
        return Effect.sync(() => {
          const n = (inFlight.get(chat) ?? 0) + 1
          inFlight.set(chat, n)
          most.set(chat, Math.max(most.get(chat) ?? 0, n))
        }).pipe(
          // Long enough for the other replica to try the chat's next steer meanwhile.
          Effect.andThen(Effect.sleep("100 millis")),
          Effect.ensuring(Effect.sync(() => inFlight.set(chat, (inFlight.get(chat) ?? 1) - 1))),
          Effect.as(teacher(params))
        )
      })

      const plan = [["busy", 3], ["calm", 2]] as const
      const jobIds: Array<string> = []
      for (const [chat, count] of plan) {
        for (let i = 0; i < count; i++) {
          const url = urls[i % 2]!
          const res = yield* postJsonAt(url, "/api/agent/chat", { chatId: chat, messages: [user(`${chat}/u${i}`, `research q${i}`)] })
          assert.strictEqual(res.status, 200, res.text)
          jobIds.push(res.json.jobs[0].id)
        }
      }
      yield* subagents.waitForRuns(jobIds.length)
      for (const id of jobIds) yield* subagents.finish(id, researchResult(`brief of ${id}`))

      for (const [chat, count] of plan) {
        const jobs = yield* eventually(
          requestAt(urls[1]!, `/api/jobs?chatId=${chat}`).pipe(Effect.map((r) => r.json.jobs as Array<JobRecord>)),
          (list) => list.length === count && list.every((j) => j.status === "done"),
          `${count} jobs done in ${chat}`
        )
        assert.strictEqual(jobs.length, count)
        const transcript = (yield* requestAt(urls[0]!, `/api/chats/${chat}/messages`)).json.messages as Array<ChatMessage>
        const steers = transcript.filter((m) => subagentResultOf(m) !== undefined)
        assert.deepStrictEqual(steers.map((m) => subagentResultOf(m)!.jobId).sort(), jobs.map((j) => j.id).sort(), "each steer once")
        // Each steer is followed by its wake answer before the next steer.
        for (const steer of steers) {
          const at = transcript.indexOf(steer)
          assert.strictEqual(transcript[at + 1]?.role, "assistant")
          assert.match(transcript[at + 1]!.content, /^wake answer:/)
        }
        assert.strictEqual(most.get(chat), 1, `one wake at a time in ${chat}`)
      }
      for (const id of jobIds) {
        assert.strictEqual(subagents.runs.filter((r) => r.jobId === id).length, 1, "each job ran once, on one replica")
      }
    }).pipe(Effect.scoped), 60_000)
})
