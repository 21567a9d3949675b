/**
 * A graceful stop (SIGTERM: the server's scope closes) gives back what the
 * replica holds, to another replica at once: it stops claiming first (so
 * the job it releases is never claimed again by itself, even with its runner
 * full), the release notifies every replica, and it does not count as a
 * failed run — so rolling restarts, one after another, never end a job in
 * `error` ("stopped N times"), where a crash (lease expiry) still counts.
 *
 * Replicas in this process over one database, each stopped by closing its
 * own scope (what runMain does on SIGTERM). Leases are long (60 s), so a
 * hand-over that waited for the lease would time the test out; on
 * PostgreSQL the sweep is long too, so the hand-over must come from the
 * release's notification. The embedded database has no notifications (one
 * server process, see JobSignals.ts): there the other in-process replica
 * finds the released job at its next sweep (200 ms).
 */
import { assert, describe, it } from "@effect/vitest"
import type { JobRecord, ProviderChatParams } from "@switchboard/domain"
import { subagentResultOf } from "@switchboard/domain"
import { Deferred, Effect, Exit, Layer, Scope } from "effect"
import type { Context } from "effect"
import { SqlClient } from "effect/sql"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { makeFakeSubagents, researchResult } from "../support/FakeSubagents.ts"
import { eventually, teacher, user } from "../support/JobsHelpers.ts"
import { backend, makeTestDatabase } from "../support/TestDatabase.ts"
import { baseUrl, layerReplica, postJsonAt, requestAt } from "../support/TestServer.ts"

interface JobRow {
  readonly lease_owner: string | null
  readonly lease_expires_at: Date | string | null
  readonly run_attempts: number
  readonly wake_attempts: number
  readonly phase: string
  readonly status: string
  /** Whether the row was last written (`updated_at`: a claim, a release) before `before`. */
  readonly earlier: boolean | null
}

const jobs = {
  // A hand-over that waited for the lease would not fit in the test's time.
  leaseMs: 60_000,
  // On PostgreSQL only the release's notification can wake the other replica in time.
  sweepMs: backend === "postgres" ? 30_000 : 200,
  // One run that died is enough to end the job in error: a graceful stop must not count as one.
  maxRuns: 1,
  // The runner full: the released job would be what its own loop, woken by the freed slot, claims.
  concurrency: 1
}

describe(`graceful stop of a replica on one ${backend} database`, () => {
  it.live("a job given back at shutdown is run by another replica before its lease would expire, never again by the stopping one; restarts do not end it in error", () =>
    Effect.gen(function*() {
      const db = yield* makeTestDatabase
      const fake = makeFakeProvider()
      fake.answerWith((params: ProviderChatParams) => Effect.succeed(teacher(params)))
      const memoMap = yield* Layer.makeMemoMap
      const outer = yield* Effect.scope
      // Built here first: on the embedded database every replica shares this one client, which must
      // outlive the replicas stopped below.
      const database: Context.Context<SqlClient.SqlClient> = yield* Layer.buildWithMemoMap(db.client(), memoMap, outer)
      const query = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
        SqlClient.SqlClient.use(f).pipe(Effect.provide(database), Effect.orDie)
      const row = (before?: Date | string | null) =>
        query((sql) =>
          sql<JobRow>`SELECT lease_owner, lease_expires_at, run_attempts, wake_attempts, phase, status,
            ${before === undefined || before === null ? sql`NULL::boolean` : sql`updated_at < ${new Date(before).toISOString()}::timestamptz`} AS earlier
            FROM jobs WHERE chat_id = 'restarts'`
        ).pipe(Effect.map((rows) => rows[0]!))

      /** A replica with sub-agents of its own (which runs the job is which replica runs it). */
      const start = Effect.gen(function*() {
        const subagents = makeFakeSubagents()
        const scope = yield* Scope.make()
        yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
        const context = yield* Layer.buildWithMemoMap(
          layerReplica(fake.layer, db.client(), { subagents: subagents.layer, jobs }),
          memoMap,
          scope
        )
        const url = yield* baseUrl.pipe(Effect.provide(context))
        return { subagents, url, stop: Scope.close(scope, Exit.void) }
      })
      const runsOf = (replica: { subagents: ReturnType<typeof makeFakeSubagents> }, jobId: string) =>
        replica.subagents.runs.filter((r) => r.jobId === jobId).length

      // A runs the job (alone, so it is A's).
      const a = yield* start
      const res = yield* postJsonAt(a.url, "/api/agent/chat", { chatId: "restarts", messages: [user("r1", "research sigma.js v3")] })
      assert.strictEqual(res.status, 200, res.text)
      const jobId = res.json.jobs[0].id as string
      yield* a.subagents.waitForRuns(1)
      const heldByA = yield* row()
      assert.match(heldByA.lease_owner ?? "", /^runner:/)
      assert.strictEqual(heldByA.run_attempts, 1)

      // B starts; A holds the lease for another minute, so B leaves the job alone until A stops.
      const b = yield* start
      yield* a.stop
      const afterA = yield* row()
      assert.notStrictEqual(afterA.lease_owner, heldByA.lease_owner, "the stopping replica does not hold the job after its stop")
      yield* b.subagents.waitForRuns(1)
      const heldByB = yield* row(heldByA.lease_expires_at)
      assert.isTrue(heldByB.earlier, "B claimed the job before A's lease would have expired")
      assert.notStrictEqual(heldByB.lease_owner, heldByA.lease_owner)
      assert.strictEqual(heldByB.run_attempts, 1, "A's run, given back, is not counted")
      assert.strictEqual(runsOf(a, jobId), 1, "never run again by the stopping replica")

      // A second rolling restart: C starts, B stops, C finishes the job.
      const c = yield* start
      c.subagents.instant((job) => researchResult(`brief for ${job.jobId}`))
      yield* b.stop
      yield* c.subagents.waitForRuns(1)
      const [job] = yield* eventually(
        requestAt(c.url, "/api/jobs?chatId=restarts").pipe(Effect.map((r) => r.json.jobs as Array<JobRecord>)),
        (list) => list[0]?.status !== "running",
        "the job settled"
      )
      assert.strictEqual(job!.status, "done", JSON.stringify(job))
      assert.deepStrictEqual(job!.result, researchResult(`brief for ${jobId}`))
      assert.deepStrictEqual([runsOf(a, jobId), runsOf(b, jobId), runsOf(c, jobId)], [1, 1, 1], "one run per replica, none repeated")
      assert.strictEqual((yield* row()).run_attempts, 1)
      const transcript = (yield* requestAt(c.url, "/api/chats/restarts/messages")).json.messages as Array<{ content: string }>
      assert.strictEqual(transcript.filter((m) => subagentResultOf(m as never) !== undefined).length, 1, "one steer")
    }).pipe(Effect.scoped), 60_000)

  it.live("a wake turn in flight at shutdown is given back and delivered by another replica; the chat is not left held", () =>
    Effect.gen(function*() {
      const db = yield* makeTestDatabase
      const fake = makeFakeProvider()
      const wakeEntered = yield* Deferred.make<void>()
      let wakes = 0
      // The first wake turn never answers (its replica is stopped meanwhile); the next one does.
      fake.answerWith((params) => {
        const last = params.messages.at(-1)
        if (last === undefined || subagentResultOf(last) === undefined) return Effect.succeed(teacher(params))
        wakes++
        return wakes === 1
          ? Deferred.succeed(wakeEntered, undefined).pipe(Effect.andThen(Effect.never))
          : Effect.succeed(teacher(params))
      })
      const memoMap = yield* Layer.makeMemoMap
      const outer = yield* Effect.scope
      const database: Context.Context<SqlClient.SqlClient> = yield* Layer.buildWithMemoMap(db.client(), memoMap, outer)
      const wakeRow = query(database)
      const start = Effect.gen(function*() {
        const subagents = makeFakeSubagents()
        subagents.instant()
        const scope = yield* Scope.make()
        yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
        const context = yield* Layer.buildWithMemoMap(
          layerReplica(fake.layer, db.client(), { subagents: subagents.layer, jobs }),
          memoMap,
          scope
        )
        return { url: yield* baseUrl.pipe(Effect.provide(context)), stop: Scope.close(scope, Exit.void) }
      })

      const a = yield* start
      const res = yield* postJsonAt(a.url, "/api/agent/chat", { chatId: "wake-stop", messages: [user("w1", "research sigma.js v3")] })
      assert.strictEqual(res.status, 200, res.text)
      yield* Deferred.await(wakeEntered)
      const heldByA = yield* wakeRow
      assert.match(heldByA.lease_owner ?? "", /^wake:/)

      const b = yield* start
      yield* a.stop
      const [job] = yield* eventually(
        requestAt(b.url, "/api/jobs?chatId=wake-stop").pipe(Effect.map((r) => r.json.jobs as Array<JobRecord>)),
        (list) => list[0]?.status !== "running",
        "the job settled by B"
      )
      assert.strictEqual(job!.status, "done")
      assert.strictEqual(wakes, 2, "the wake turn ran once more, on B")
      const transcript = (yield* requestAt(b.url, "/api/chats/wake-stop/messages")).json.messages as Array<{ content: string }>
      assert.strictEqual(transcript.filter((m) => subagentResultOf(m as never) !== undefined).length, 1, "one steer")
      assert.match(transcript.at(-1)!.content, /^wake answer:/)
      const after = yield* postJsonAt(b.url, "/api/agent/chat", { chatId: "wake-stop", messages: [user("w2", "thanks")] })
      assert.strictEqual(after.status, 200, "the chat is not held by the stopped replica's turn")
    }).pipe(Effect.scoped), 60_000)
})

/** The job of chat `wake-stop`, read with the test's own client. */
const query = (database: Context.Context<SqlClient.SqlClient>) =>
  SqlClient.SqlClient.use((sql) =>
    sql<{ lease_owner: string | null }>`SELECT lease_owner FROM jobs WHERE chat_id = 'wake-stop'`
  ).pipe(Effect.provide(database), Effect.orDie, Effect.map((rows) => rows[0]!))
