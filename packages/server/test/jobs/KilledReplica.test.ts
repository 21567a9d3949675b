/**
 * Recovery after a killed runner and after a killed wake, with real
 * processes: two servers (`node dist/server/src/main.js`, the production
 * build with the real `SubagentsLive`) on one PostgreSQL, their provider
 * a local OpenAI-compatible fake in this test process. One provider call
 * never answers the first time — the research sub-agent's, or the wake
 * turn's — and the replica waiting for it is killed with SIGKILL (no finalizer
 * runs: its lease, and for a wake the chat's marker, are left to expire). The
 * other replica takes over and finishes: no job lost, no steer twice, the chat
 * not wedged for longer than its marker's expiry.
 *
 * Only on PostgreSQL: the embedded database belongs to one process (its
 * DATA_DIR lock), so two server processes cannot share it.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ChatMessage, JobRecord } from "@switchboard/domain"
import { subagentResultOf } from "@switchboard/domain"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { FakeOpenAi } from "@switchboard/providers/testing"
import type { RecordedRequest } from "@switchboard/providers/testing"
import { eventually } from "../support/JobsHelpers.ts"
import { startServerPair } from "../support/ServerProcess.ts"
import type { ServerProcess } from "../support/ServerProcess.ts"
import { backend, makeTestDatabase } from "../support/TestDatabase.ts"
import { postJsonAt, requestAt } from "../support/TestServer.ts"

const pidOf = (owner: string | null) => owner === null ? undefined : Number(owner.split(":")[2])

const lastMessage = (request: RecordedRequest) => {
  const messages = (request.body as { messages: Array<{ role: string; content: string | null }> }).messages
  return messages.at(-1)!
}

/**
 * Two replicas on a scratch database, their provider a fake that plays the
 * teacher (dispatch, ack, wake answer) and the research sub-agent; `hang`
 * picks which first call never answers (the moment the victim is killed).
 */
const scenario = (hang: "research" | "wake", extraEnv: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const db = yield* makeTestDatabase
    const fake = yield* FakeOpenAi.scoped()
    const calls = { research: 0, wake: 0 }
    fake.respondWith((request) => {
      const body = request.body as { model: string }
      if (body.model === "research-model") {
        calls.research++
        return hang === "research" && calls.research === 1
          ? FakeOpenAi.reply.hang()
          : FakeOpenAi.reply.text("Sigma.js v3 draws graphs with WebGL.")
      }
      const last = lastMessage(request)
      if (last.role === "tool") return FakeOpenAi.reply.text("dispatched")
      if (typeof last.content === "string" && last.content.startsWith("Research complete")) {
        calls.wake++
        return hang === "wake" && calls.wake === 1 ? FakeOpenAi.reply.hang() : FakeOpenAi.reply.text("wake answer: the brief is in")
      }
      if (typeof last.content === "string" && last.content.startsWith("research ")) {
        return FakeOpenAi.reply.toolCalls([{ id: "call_kill_1", name: "research", arguments: JSON.stringify({ question: "sigma.js v3" }) }])
      }
      return FakeOpenAi.reply.text(`you said: ${last.content}`)
    })
    const env = {
      DATABASE_URL: db.url!,
      LLM_PROVIDER: "openai-compatible",
      LLM_MODEL: "teacher-model",
      LLM_API_KEY: "sk-kill-test",
      LLM_BASE_URL: fake.url,
      LLM_TIMEOUT_MS: "20000",
      JOB_MODEL_RESEARCH: "research-model",
      JOB_LEASE_MS: "1500",
      JOB_SWEEP_MS: "200",
      LOG_LEVEL: "info",
      ...extraEnv
    }
    const replicas = yield* startServerPair(env)
    const turn = yield* postJsonAt(replicas[0].url, "/api/agent/chat", {
      chatId: "kill-1",
      messages: [{ id: "u1", role: "user", content: "research sigma.js v3", timestamp: 1 }]
    })
    assert.strictEqual(turn.status, 200, turn.text)
    assert.strictEqual(turn.json.jobs.length, 1)

    /** SIGKILLs the replica holding the job's lease once `inFlight` holds; returns the survivor. */
    const killHolder = (inFlight: () => boolean, role: "runner" | "wake") =>
      Effect.gen(function*() {
        yield* Effect.promise(() => fake.waitFor(inFlight, 15_000))
        const owner = yield* eventually(leaseOwner(db.url!), (o) => o !== null && o.startsWith(`${role}:`), `the ${role}'s lease`)
        const victim = replicas.find((r) => r.child.pid === pidOf(owner))
        assert.isDefined(victim, `the lease owner ${owner} is one of the replicas`)
        victim!.child.kill("SIGKILL")
        yield* Effect.promise(() => new Promise((resolve) => victim!.child.once("exit", resolve)))
        return replicas.find((r) => r !== victim)!
      })

    /** What must hold once the survivor finished: one job done, one steer answered once, the chat free. */
    const finishedBy = (survivor: ServerProcess) =>
      Effect.gen(function*() {
        const jobs = yield* eventually(
          requestAt(survivor.url, "/api/jobs?chatId=kill-1").pipe(Effect.map((r) => r.json.jobs as Array<JobRecord>)),
          (list) => list[0]?.status !== "running",
          "the job finished by the survivor",
          25_000
        )
        assert.strictEqual(jobs.length, 1, "no job lost, none duplicated")
        assert.strictEqual(jobs[0]!.status, "done")
        assert.include(JSON.stringify(jobs[0]!.result), "Sigma.js v3 draws graphs with WebGL.")
        const transcript = (yield* requestAt(survivor.url, "/api/chats/kill-1/messages")).json.messages as Array<ChatMessage>
        assert.strictEqual(transcript.filter((m) => subagentResultOf(m) !== undefined).length, 1, "one steer")
        assert.strictEqual(transcript.filter((m) => m.content === "wake answer: the brief is in").length, 1, "answered once")
        assert.strictEqual(transcript.at(-1)!.content, "wake answer: the brief is in")
        const after = yield* postJsonAt(survivor.url, "/api/agent/chat", {
          chatId: "kill-1",
          messages: [{ id: "u2", role: "user", content: "thanks", timestamp: 2 }]
        })
        assert.strictEqual(after.status, 200, "the chat is not wedged")
        assert.strictEqual(after.json.content, "you said: thanks")
      })

    return { calls, killHolder, finishedBy }
  })

// PostgreSQL only: the embedded database belongs to one process (its DATA_DIR lock).
describe("two server processes on one PostgreSQL", () => {
  it.live.skipIf(backend !== "postgres")(
    "recovery after a killed runner: SIGKILL mid-job, the other replica runs it again; one steer, chat not wedged",
    () =>
      Effect.gen(function*() {
        const { calls, finishedBy, killHolder } = yield* scenario("research")
        // The job is mid-run: its sub-agent's provider call is in flight.
        const survivor = yield* killHolder(() => calls.research >= 1, "runner")
        yield* finishedBy(survivor)
        assert.strictEqual(calls.research, 2, "run once more, by the survivor")
        assert.strictEqual(calls.wake, 1)
      }).pipe(Effect.scoped),
    60_000
  )

  it.live.skipIf(backend !== "postgres")(
    "recovery after a killed wake: SIGKILL mid-wake-turn (steer stored, marker held), the other replica re-enters it once the marker expired",
    () =>
      Effect.gen(function*() {
        // A short marker, so the dead wake's chat frees up within the test: 2.5 s + 0.5 s.
        const { calls, finishedBy, killHolder } = yield* scenario("wake", { LLM_TIMEOUT_MS: "2500", TURN_MARKER_GRACE_MS: "500" })
        const survivor = yield* killHolder(() => calls.wake >= 1, "wake")
        yield* finishedBy(survivor)
        assert.strictEqual(calls.research, 1, "the sub-agent ran once: its result was stored")
        assert.strictEqual(calls.wake, 2, "the wake turn was re-entered once")
      }).pipe(Effect.scoped),
    60_000
  )
})

/** The current lease owner of the chat's job, read straight from the database. */
const leaseOwner = (url: string) =>
  SqlClient.SqlClient.use((sql) => sql<{ lease_owner: string | null }>`SELECT lease_owner FROM jobs WHERE chat_id = 'kill-1'`).pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })),
    Effect.orDie,
    Effect.map((rows) => rows[0]?.lease_owner ?? null)
  )
