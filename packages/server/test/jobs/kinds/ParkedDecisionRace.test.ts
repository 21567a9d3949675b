/**
 * Two decisions of one parked job's approval on two replicas (docs/subagents.md): the first takes
 * it, the second is told it was decided already (409) — never that it is unknown (404). The race
 * is made to happen, not hoped for: one replica's decision is held inside a transaction that has
 * locked the job's row, the other's statement waits on that lock, and the first commits only once
 * PostgreSQL shows the second waiting. (The embedded database is one session: its statements never
 * interleave, so there is no race to make there.)
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { layerMigrated } from "../../../src/db/Database.ts"
import { JobParking } from "../../../src/jobs/JobParking.ts"
import { storedChatKey } from "../../../src/users/ChatKey.ts"
import { backend, makeTestDatabase } from "../../support/TestDatabase.ts"

const CHAT = storedChatKey("race-chat")
const APPROVAL = "apr_0123456789abcdef0123456789abcdef"

describe(`a parked job's approval decided twice at once (${backend})`, () => {
  it.live.skipIf(backend !== "postgres")("the decision that waited on the other's lock answers decided-already", () =>
    Effect.gen(function*() {
      const db = yield* makeTestDatabase
      const replica = () => Layer.build(JobParking.layer.pipe(Layer.provideMerge(layerMigrated(db.client()))))
      const first = yield* replica()
      const second = yield* replica()
      const sql = Context.get(first, SqlClient.SqlClient)

      yield* sql`INSERT INTO chats (id) VALUES (${CHAT})`
      yield* sql`
        INSERT INTO jobs (id, chat_id, kind, tool_call_id, input, checkpoint, waiting_for, parked_until)
        VALUES ('job_race', ${CHAT}, 'refund-run', 'call_1', '{}'::jsonb,
          ${JSON.stringify({ messages: [], rounds: 1, approvalId: APPROVAL, callId: "call_9", workedMs: 0 })}::jsonb,
          ${JSON.stringify({ approvalId: APPROVAL, toolName: "shop__refund", input: {} })}::jsonb, now() + interval '1 hour')`

      const decideOn = (services: typeof first) => Context.get(services, JobParking).decide(CHAT, APPROVAL, { approved: true })

      // The first replica's decision, inside a transaction that locked the row before the second began.
      // (A transaction reads the activity view from one snapshot unless told to take a new one.)
      const waiting = sql`SELECT pg_stat_clear_snapshot()`.pipe(Effect.andThen(sql<{ n: number }>`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE wait_event_type = 'Lock' AND query LIKE '%approval_decisions%' AND pid <> pg_backend_pid()`))
      const firstOutcome = yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT id FROM jobs WHERE id = 'job_race' FOR UPDATE`
        const racing = yield* Effect.forkChild(decideOn(second))
        yield* waiting.pipe(
          Effect.flatMap((rows) => rows[0]!.n > 0 ? Effect.void : Effect.fail("not waiting yet")),
          Effect.retry(Schedule.spaced("20 millis"))
        )
        const outcome = yield* decideOn(first)
        return { outcome, racing }
      }))
      assert.strictEqual(firstOutcome.outcome, "decided")
      assert.strictEqual(yield* Fiber.join(firstOutcome.racing), "decided-already")
      const decisions = yield* sql<{ approved: boolean }>`SELECT approved FROM approval_decisions WHERE approval_id = ${APPROVAL}`
      assert.deepStrictEqual(decisions.map((d) => d.approved), [true])
    }).pipe(Effect.scoped), { timeout: 30_000 })
})
