/**
 * The protocol's steps after the ack (docs/jobs.md, "A job's life"),
 * each a test named after it: activity updates, the steer and the status flip
 * after the wake turn, the wait behind an in-flight turn and behind an
 * unanswered client tool call, idempotent re-delivery, per-chat serialization,
 * the time limit, and recovery after a killed runner and a killed wake (the
 * database state a SIGKILL leaves behind; the two-process kill test is
 * `KilledReplica.test.ts`).
 */
import { assert, describe, layer } from "@effect/vitest"
import type { ChatMessage, ProviderChatParams } from "@switchboard/domain"
import { buildSubagentSteer, maxStoredValueBytes, steerMessageId, subagentResultOf } from "@switchboard/domain"
import { Deferred, Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import { ChatRepo } from "../../src/chat/ChatRepo.ts"
import { ProviderError } from "@switchboard/providers"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { makeFakeSubagents, researchResult } from "../support/FakeSubagents.ts"
import { chat, eventually, jobsOf, settled, teacher, transcriptOf, user } from "../support/JobsHelpers.ts"
import { layerTestServer } from "../support/TestServer.ts"
import { storedChatKey } from "../../src/users/ChatKey.ts"

const fake = makeFakeProvider()
const subagents = makeFakeSubagents()

const isWake = (params: ProviderChatParams) => {
  const last = params.messages.at(-1)
  return last !== undefined && subagentResultOf(last) !== undefined
}

/** Dispatches one research job in `chatId`; returns its id. */
const dispatch = (chatId: string, id = "u1", question = "sigma.js v3") =>
  Effect.gen(function*() {
    const res = yield* chat(chatId, [user(`${chatId}-${id}`, `research ${question}`)])
    assert.strictEqual(res.status, 200, res.text)
    return res.json.jobs[0].id as string
  })

const wakeAttempts = (jobId: string) =>
  SqlClient.SqlClient.use((sql) =>
    sql<{ n: number; leased: boolean }>`SELECT wake_attempts AS n, lease_owner IS NOT NULL AS leased FROM jobs WHERE id = ${jobId}`
  ).pipe(Effect.map((rows) => rows[0]!), Effect.orDie)

const steersIn = (messages: ReadonlyArray<ChatMessage>) => messages.filter((m) => subagentResultOf(m) !== undefined)

describe("the wake pipeline", () => {
  // A chat's limit raised above the driver's 16 MiB row, for the test of a transcript larger than that.
  layer(layerTestServer(fake.layer, { CHAT_TRANSCRIPT_MAX_BYTES: String(64 * 1024 * 1024) }, { subagents: subagents.layer }), {
    excludeTestServices: true
  })("one server", (it) => {
    it.effect("activity updates: the sub-agent's activity line is live in GET /api/jobs", () =>
      Effect.gen(function*() {
        fake.answerWith((params) => Effect.succeed(teacher(params)))
        subagents.answerWith((job, gated) =>
          job.reportActivity(`web_search: "${(job.input as { question: string }).question}"`).pipe(Effect.andThen(gated))
        )
        const jobId = yield* dispatch("activity")
        const [job] = yield* eventually(jobsOf("activity"), (jobs) => jobs[0]?.activity.startsWith("web_search") === true, "the tool's activity line")
        assert.strictEqual(job!.activity, "web_search: \"sigma.js v3\"")
        assert.strictEqual(job!.status, "running")
        yield* subagents.finish(jobId, researchResult("brief"))
        yield* settled("activity")
        subagents.gated()
      }))

    it.effect("the steer is delivered by a wake turn, and the status flips to done only after it", () =>
      Effect.gen(function*() {
        const entered = yield* Deferred.make<ProviderChatParams>()
        const release = yield* Deferred.make<void>()
        fake.answerWith((params) =>
          isWake(params)
            ? Deferred.succeed(entered, params).pipe(Effect.andThen(Deferred.await(release)), Effect.as(teacher(params)))
            : Effect.succeed(teacher(params))
        )
        const jobId = yield* dispatch("steer")
        yield* subagents.finish(jobId, researchResult("Sigma.js v3 renders graphs with WebGL."))

        const params = yield* Deferred.await(entered)
        // Write-ahead: the steer is stored before the provider is called; the job is not done yet.
        const during = yield* transcriptOf("steer")
        const steer = during.at(-1)!
        assert.strictEqual(steer.id, steerMessageId(jobId))
        assert.strictEqual(steer.role, "user")
        const [record] = yield* jobsOf("steer")
        assert.deepStrictEqual(steer.metadata, { subagentResult: { jobId, kind: "research", toolCallId: record!.toolCallId } })
        assert.strictEqual(steer.parts?.[0]?.type, "text")
        assert.deepStrictEqual(steer.parts?.[1], {
          type: "data-subagent-artifact",
          data: { kind: "research", result: researchResult("Sigma.js v3 renders graphs with WebGL.") }
        })
        assert.include(steer.content, "Sigma.js v3 renders graphs with WebGL.")
        assert.strictEqual(steer.content, (steer.parts?.[0] as { text: string }).text)
        assert.deepStrictEqual(params.messages.map((m) => m.role), ["user", "assistant", "tool", "assistant", "user"])
        const [running] = yield* jobsOf("steer")
        assert.strictEqual(running!.status, "running", "not done while the wake turn runs")
        assert.isUndefined(running!.result)

        yield* Deferred.succeed(release, undefined)
        const [done] = yield* settled("steer")
        assert.strictEqual(done!.status, "done")
        assert.deepStrictEqual(done!.result, researchResult("Sigma.js v3 renders graphs with WebGL."))
        const after = yield* transcriptOf("steer")
        assert.deepStrictEqual(after.slice(-2).map((m) => m.role), ["user", "assistant"])
        assert.match(after.at(-1)!.content, /^wake answer: Research complete/)
        assert.strictEqual(steersIn(after).length, 1)
      }))

    it.effect("a result too large to store is steered as a failure saying so; the chat and its jobs stay readable", () =>
      Effect.gen(function*() {
        fake.answerWith((params) => Effect.succeed(teacher(params)))
        const jobId = yield* dispatch("huge-result")
        yield* subagents.finish(jobId, researchResult("b".repeat(maxStoredValueBytes)))
        const [job] = yield* settled("huge-result")
        assert.strictEqual(job!.status, "error")
        assert.deepStrictEqual(job!.result, { brief: "Research failed: the result was too large to store", sources: [] })
        const steer = steersIn(yield* transcriptOf("huge-result"))[0]!
        assert.match(steer.content, /^Research failed: the result was too large to store/)
      }))

    it.effect("a chat whose transcript outgrows what one row may hold (its limit raised) still gets its steers", () =>
      Effect.gen(function*() {
        fake.answerWith((params) => Effect.succeed(teacher(params)))
        // Five messages of 3.5 MiB: each fits a row of its own, together they are over the driver's 16 MiB.
        for (let i = 0; i < 5; i++) {
          const res = yield* chat("long-chat", [user(`long-${i}`, `note ${i}: ${"l".repeat(3.5 * 1024 * 1024)}`)])
          assert.strictEqual(res.status, 200, res.text)
        }
        const jobId = yield* dispatch("long-chat")
        yield* subagents.finish(jobId, researchResult("a short brief"))
        const [job] = yield* settled("long-chat")
        assert.strictEqual(job!.status, "done")
        const steers = steersIn(yield* transcriptOf("long-chat"))
        assert.strictEqual(steers.length, 1)
        assert.include(steers[0]!.content, "a short brief")
      }))

    it.effect("a steer waits while a turn is in flight, then fires right after it", () =>
      Effect.gen(function*() {
        fake.answerWith((params) => Effect.succeed(teacher(params)))
        const jobId = yield* dispatch("in-flight")
        const entered = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        fake.answerWith((params) =>
          params.messages.at(-1)?.content === "a slow question"
            ? Deferred.succeed(entered, undefined).pipe(Effect.andThen(Deferred.await(release)), Effect.as(teacher(params)))
            : Effect.succeed(teacher(params))
        )
        const slow = yield* Effect.forkChild(chat("in-flight", [user("u2", "a slow question")]))
        yield* Deferred.await(entered)
        yield* subagents.finish(jobId, researchResult("brief"))
        // The result is stored and the wake queued; a chat a turn holds is not claimed for a wake
        // (that turn's end makes the wake due and notifies).
        yield* eventually(jobsOf("in-flight"), (jobs) => jobs[0]?.finishedAt !== undefined, "the job finished")
        assert.isFalse((yield* wakeAttempts(jobId)).leased, "no wake holds the job while the turn is in flight")
        assert.strictEqual(steersIn(yield* transcriptOf("in-flight")).length, 0, "no steer while the turn is in flight")
        assert.strictEqual((yield* jobsOf("in-flight"))[0]!.status, "running")

        yield* Deferred.succeed(release, undefined)
        assert.strictEqual((yield* Fiber.join(slow)).status, 200, "the client's turn was not disturbed")
        yield* settled("in-flight")
        const after = yield* transcriptOf("in-flight")
        assert.deepStrictEqual(
          after.slice(-4).map((m) => m.content.split(":")[0]),
          ["a slow question", "you said", "Research complete — the researcher's full brief follows. Weave it into the lesson and cite its sources when you use its findings", "wake answer"]
        )
      }))

    it.effect("a steer waits behind an unanswered client tool call, and fires after the continuation", () =>
      Effect.gen(function*() {
        fake.answerWith((params) => Effect.succeed(teacher(params)))
        const first = yield* chat("pending-call", [user("u1", "both the intro")])
        const jobId = first.json.jobs[0].id as string
        yield* subagents.finish(jobId, researchResult("brief"))
        yield* eventually(wakeAttempts(jobId), (w) => w.n >= 1 && !w.leased, "a deferred wake")
        assert.strictEqual(steersIn(yield* transcriptOf("pending-call")).length, 0, "no steer while the call is unanswered")

        const call = first.json.toolCalls[0]
        const continuation = yield* chat("pending-call", [
          { id: first.json.messageId, role: "assistant", content: "doing both", toolCalls: [call], timestamp: 2 },
          { id: "t1", role: "tool", content: "hi", toolResult: { toolCallId: call.id, name: "transcribe_video", result: { text: "hi" } }, timestamp: 3 }
        ])
        assert.strictEqual(continuation.status, 200)
        yield* settled("pending-call")
        const after = yield* transcriptOf("pending-call")
        assert.deepStrictEqual(after.map((m) => m.role), ["user", "assistant", "tool", "tool", "assistant", "user", "assistant"])
        assert.strictEqual(after.at(-3)!.content, "got the transcript")
        assert.strictEqual(after.at(-2)!.id, steerMessageId(jobId))
      }))

    it.effect("two steers of one chat never fire at once; steers of different chats do not wait for each other", () =>
      Effect.gen(function*() {
        fake.answerWith((params) => Effect.succeed(teacher(params)))
        const a1 = yield* dispatch("serial-a", "u1", "first")
        const a2 = yield* dispatch("serial-a", "u2", "second")
        const b1 = yield* dispatch("serial-b", "u1", "other chat")
        const release = yield* Deferred.make<void>()
        let inFlightA = 0
        let maxInFlightA = 0
        fake.answerWith((params) => {
          if (!isWake(params)) return Effect.succeed(teacher(params))
          const steer = subagentResultOf(params.messages.at(-1)!)!
          if (steer.jobId === b1) return Effect.succeed(teacher(params))
          return Effect.sync(() => {
            inFlightA++
            maxInFlightA = Math.max(maxInFlightA, inFlightA)
          }).pipe(
            Effect.andThen(steer.jobId === a1 ? Deferred.await(release) : Effect.void),
            Effect.ensuring(Effect.sync(() => inFlightA--)),
            Effect.as(teacher(params))
          )
        })
        yield* subagents.finish(a1, researchResult("a1"))
        yield* eventually(transcriptOf("serial-a"), (m) => steersIn(m).length === 1, "the first steer of chat A")
        yield* subagents.finish(a2, researchResult("a2"))
        yield* subagents.finish(b1, researchResult("b1"))
        // Chat B's wake completes while chat A's first wake turn is still held.
        yield* settled("serial-b")
        const held = yield* transcriptOf("serial-a")
        assert.strictEqual(steersIn(held).length, 1, "A's second steer waits for A's first wake turn")
        assert.deepStrictEqual((yield* jobsOf("serial-a")).map((j) => j.status), ["running", "running"])

        yield* Deferred.succeed(release, undefined)
        yield* settled("serial-a", 2)
        assert.strictEqual(maxInFlightA, 1)
        const after = yield* transcriptOf("serial-a")
        assert.deepStrictEqual(steersIn(after).map((m) => m.id), [steerMessageId(a1), steerMessageId(a2)])
        assert.deepStrictEqual(after.slice(-4).map((m) => m.role), ["user", "assistant", "user", "assistant"])
      }))

    it.effect("idempotent re-delivery: a wake re-entered after its steer was answered delivers nothing twice", () =>
      Effect.gen(function*() {
        fake.answerWith((params) => Effect.succeed(teacher(params)))
        subagents.instant()
        const jobId = yield* dispatch("redeliver")
        yield* settled("redeliver")
        subagents.gated()
        const before = yield* transcriptOf("redeliver")
        const calls = fake.calls.length
        // As if the wake had died after its answer was stored: the job is back in its queue.
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE jobs SET phase = 'wake', status = 'running', lease_owner = NULL, wake_after = now() WHERE id = ${jobId}`
        yield* settled("redeliver")
        assert.deepStrictEqual((yield* transcriptOf("redeliver")).map((m) => m.id), before.map((m) => m.id))
        assert.strictEqual(fake.calls.length, calls, "no provider call for an answered steer")
        // And storing the same steer again is a no-op: its id is unique in the chat.
        const repo = yield* ChatRepo
        yield* repo.append(storedChatKey("redeliver"), [buildSubagentSteer({ id: jobId, kind: "research", toolCallId: "x" }, researchResult("again"))])
        assert.strictEqual(steersIn(yield* transcriptOf("redeliver")).length, 1)
      }).pipe(Effect.provide(ChatRepo.layer)))

    it.effect("a wake turn that fails (provider error) is retried; the steer is still delivered once", () =>
      Effect.gen(function*() {
        fake.answerWith((params) => Effect.succeed(teacher(params)))
        const jobId = yield* dispatch("wake-fails")
        let wakeCalls = 0
        fake.answerWith((params) =>
          isWake(params) && ++wakeCalls === 1
            ? Effect.fail(new ProviderError({ reason: "Status", status: 529, message: "overloaded" }))
            : Effect.succeed(teacher(params))
        )
        yield* subagents.finish(jobId, researchResult("brief"))
        const [done] = yield* settled("wake-fails")
        assert.strictEqual(done!.status, "done")
        assert.strictEqual(wakeCalls, 2)
        const after = yield* transcriptOf("wake-fails")
        assert.strictEqual(steersIn(after).length, 1, "the retry found its steer stored and answered it")
        assert.match(after.at(-1)!.content, /^wake answer:/)
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ wake_failures: number }>`SELECT wake_failures FROM jobs WHERE id = ${jobId}`
        assert.strictEqual(row!.wake_failures, 1)
      }))

    it.effect("a wake answer that asks for client tools is left for the client", () =>
      Effect.gen(function*() {
        fake.answerWith((params) => Effect.succeed(teacher(params)))
        const jobId = yield* dispatch("wake-client-call")
        fake.answerWith((params) =>
          Effect.succeed(
            isWake(params)
              ? { content: "let me check the video", toolCalls: [{ id: "call_after_wake", name: "transcribe_video", args: {} }] }
              : teacher(params)
          )
        )
        yield* subagents.finish(jobId, researchResult("brief"))
        const [done] = yield* settled("wake-client-call")
        assert.strictEqual(done!.status, "done", "the wake turn completed: its answer is the client's now")
        const after = yield* transcriptOf("wake-client-call")
        assert.deepStrictEqual(after.at(-1)!.toolCalls?.map((c) => c.name), ["transcribe_video"])
        // The client's continuation answers it, like any tool call.
        const res = yield* chat("wake-client-call", [{
          id: "t-after-wake",
          role: "tool",
          content: "hi",
          toolResult: { toolCallId: "call_after_wake", name: "transcribe_video", result: { text: "hi" } },
          timestamp: 9
        }])
        assert.strictEqual(res.status, 200)
        assert.strictEqual(res.json.content, "got the transcript")
      }))

    it.effect("recovery after a killed wake: the stale-job sweep re-enters it, the stored steer is answered once", () =>
      Effect.gen(function*() {
        fake.answerWith((params) => Effect.succeed(teacher(params)))
        const jobId = yield* dispatch("killed-wake")
        const sql = yield* SqlClient.SqlClient
        // What a wake killed mid-turn leaves: its steer stored write-ahead, no answer, its lease and the
        // chat's marker still held (both expire shortly).
        const [job] = yield* sql<{ tool_call_id: string }>`SELECT tool_call_id FROM jobs WHERE id = ${jobId}`
        const result = researchResult("recovered brief")
        const repo = yield* ChatRepo
        yield* repo.append(storedChatKey("killed-wake"), [buildSubagentSteer({ id: jobId, kind: "research", toolCallId: job!.tool_call_id }, result, 5)])
        yield* sql`INSERT INTO chat_turns (chat_id, turn_id, expires_at) VALUES ('killed-wake', 'dead-wake', now() + interval '400 milliseconds')
          ON CONFLICT (chat_id) DO UPDATE SET turn_id = EXCLUDED.turn_id, expires_at = EXCLUDED.expires_at`
        yield* sql`UPDATE jobs SET phase = 'wake', result = ${JSON.stringify(result)}::jsonb, finished_at = now(),
          lease_owner = 'wake:dead-replica', lease_expires_at = now() + interval '300 milliseconds', wake_attempts = 1
          WHERE id = ${jobId}`
        const [done] = yield* settled("killed-wake")
        assert.strictEqual(done!.status, "done")
        const after = yield* transcriptOf("killed-wake")
        assert.strictEqual(steersIn(after).length, 1)
        assert.deepStrictEqual(after.slice(-2).map((m) => m.role), ["user", "assistant"])
        assert.match(after.at(-1)!.content, /^wake answer: Research complete/)
      }).pipe(Effect.provide(ChatRepo.layer)))

    it.effect("recovery after a killed runner: a job whose lease expired is run again by another runner", () =>
      Effect.gen(function*() {
        fake.answerWith((params) => Effect.succeed(teacher(params)))
        const sql = yield* SqlClient.SqlClient
        const jobId = yield* dispatch("killed-runner")
        const runsOf = Effect.sync(() => subagents.runs.filter((r) => r.jobId === jobId).length)
        yield* eventually(runsOf, (n) => n === 1, "the first run")
        // As if the runner holding it had been killed: someone else's lease, expired.
        yield* sql`UPDATE jobs SET lease_owner = 'runner:dead-replica', lease_expires_at = now() - interval '1 second' WHERE id = ${jobId}`
        yield* eventually(runsOf, (n) => n === 2, "a second run")
        yield* subagents.finish(jobId, researchResult("second run"))
        const [done] = yield* settled("killed-runner")
        assert.strictEqual(done!.status, "done")
        assert.strictEqual(steersIn(yield* transcriptOf("killed-runner")).length, 1)
      }))
  })

  const slow = makeFakeSubagents()
  layer(
    layerTestServer(fake.layer, {}, { subagents: slow.layer, jobs: { timeoutMs: 300, maxWakes: 2 } }),
    { excludeTestServices: true }
  )("JOB_TIMEOUT_MS, a wake that keeps failing", (it) => {
    it.effect("a job past its time limit ends in the failure shape and is steered like any result", () =>
      Effect.gen(function*() {
        fake.answerWith((params) => Effect.succeed(teacher(params)))
        yield* dispatch("timeout")
        const [job] = yield* settled("timeout")
        assert.strictEqual(job!.status, "error")
        assert.deepStrictEqual(job!.result, { brief: "Research failed: timed out after 300 ms", sources: [] })
        const steer = steersIn(yield* transcriptOf("timeout"))[0]!
        assert.match(steer.content, /^Research failed: timed out after 300 ms/)
      }))

    it.effect("a wake turn that keeps failing settles the job after the last try, its steer stored for the next turn", () =>
      Effect.gen(function*() {
        fake.answerWith((params) =>
          isWake(params)
            ? Effect.fail(new ProviderError({ reason: "Network", message: "ECONNRESET" }))
            : Effect.succeed(teacher(params))
        )
        yield* dispatch("wake-down")
        const [job] = yield* settled("wake-down")
        assert.strictEqual(job!.status, "error", "the timed-out job's failure shape")
        const transcript = yield* transcriptOf("wake-down")
        assert.strictEqual(steersIn(transcript).length, 1, "the steer is stored (write-ahead)")
        assert.strictEqual(transcript.at(-1)!.id, steersIn(transcript)[0]!.id, "and unanswered")
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ wake_failures: number }>`SELECT wake_failures FROM jobs WHERE chat_id = 'wake-down'`
        assert.strictEqual(row!.wake_failures, 1, "one deferral, then the last try settled it")
        // The chat's next turn lets the model see the steer.
        fake.answerWith((params) => Effect.succeed({ content: `last before mine: ${params.messages.at(-2)!.content.split(":")[0]}` }))
        const next = yield* chat("wake-down", [user("u9", "so?")])
        assert.strictEqual(next.json.content, "last before mine: Research failed")
      }))
  })

  // Its own server: its runs wait for the test, not for a time limit, so the two that hold the
  // slots overlap however slowly the machine turns (a 300 ms limit let the first end, under load,
  // before the second was dispatched).
  const pair = makeFakeSubagents()
  layer(
    layerTestServer(fake.layer, {}, { subagents: pair.layer, jobs: { concurrency: 2 } }),
    { excludeTestServices: true }
  )("JOB_CONCURRENCY", (it) => {
    it.effect("no more than JOB_CONCURRENCY sub-agents run at once in a server; the others wait for a slot", () =>
      Effect.gen(function*() {
        fake.answerWith((params) => Effect.succeed(teacher(params)))
        let running = 0
        let most = 0
        pair.answerWith((_job, gated) =>
          Effect.sync(() => {
            running++
            most = Math.max(most, running)
          }).pipe(Effect.andThen(gated), Effect.ensuring(Effect.sync(() => running--)))
        )
        // Three chats, so that no job's wake turn holds the chat another job is dispatched in.
        for (const n of [1, 2, 3]) yield* dispatch(`concurrency-${n}`, "u1", `question ${n}`)
        const [first] = yield* pair.waitForRuns(2)
        // Both slots are held until a run ends: given time to start, the third does not.
        yield* Effect.sleep("300 millis")
        assert.strictEqual(pair.runs.length, 2, "the third job waits for a slot")
        assert.strictEqual(running, 2)
        yield* pair.finish(first!.jobId, researchResult("first"))
        const runs = yield* pair.waitForRuns(3)
        for (const run of runs.slice(1)) yield* pair.finish(run.jobId, researchResult(run.jobId))
        for (const n of [1, 2, 3]) {
          const [job] = yield* settled(`concurrency-${n}`)
          assert.strictEqual(job!.status, "done")
        }
        assert.strictEqual(most, 2)
      }))
  })
})
