/**
 * A parked job's approval decided by two at once (docs/subagents.md): two users' decisions on two
 * replicas, or the user's decision and the job's own once its wait ran out. The first recorded
 * holds; the other reads it — a 409 for a second decision (never a 404), the user's decision for a
 * job whose wait ran out at that moment (never a denial nobody recorded), a 409 for the user's
 * decision once the job's denial was recorded — and neither waits on the other for good (both take
 * the job's row before the decision's key: taken the other way round, they deadlock). The races are made to
 * happen, not hoped for: one replica's decision is held inside a transaction that locked the job's
 * row, the other's statement waits on it, and the first commits only once PostgreSQL shows the
 * second waiting (`raceUnderLock`).
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect } from "effect"
import { JobParking } from "../../../src/jobs/JobParking.ts"
import type { Checkpoint } from "../../../src/jobs/JobParking.ts"
import { storedChatKey } from "../../../src/users/ChatKey.ts"
import { raceUnderLock, twoReplicas } from "../../support/LockRace.ts"
import { backend } from "../../support/TestDatabase.ts"

const CHAT = storedChatKey("race-chat")
const JOB = "job_race"
const APPROVAL = "apr_0123456789abcdef0123456789abcdef"
const CHECKPOINT: Checkpoint = { messages: [], rounds: 1, approvalId: APPROVAL, callId: "call_9", workedMs: 0 }
const TIMED_OUT = "no decision within APPROVAL_TIMEOUT"

/**
 * Two replicas' `JobParking` on one database, a job parked on `APPROVAL`, and `race`: `held` on the
 * first replica inside a transaction that locked the job's row before `racing` began on the second
 * (`raceUnderLock`). Both outcomes, and the decisions stored.
 */
const parkedJob = Effect.gen(function*() {
  const { first, second, sql } = yield* twoReplicas(JobParking.layer)
  yield* sql`INSERT INTO chats (id) VALUES (${CHAT})`
  yield* sql`
    INSERT INTO jobs (id, chat_id, kind, tool_call_id, input, checkpoint, waiting_for, parked_until)
    VALUES (${JOB}, ${CHAT}, 'refund-run', 'call_1', '{}'::jsonb, ${JSON.stringify(CHECKPOINT)}::jsonb,
      ${JSON.stringify({ approvalId: APPROVAL, toolName: "shop__refund", input: {} })}::jsonb, now() + interval '1 hour')`

  const race = <A, B>(held: (parking: JobParking["Service"]) => Effect.Effect<A>, racing: (parking: JobParking["Service"]) => Effect.Effect<B>) =>
    Effect.gen(function*() {
      const outcome = yield* raceUnderLock({
        sql,
        first: sql`SELECT id FROM jobs WHERE id = ${JOB} FOR UPDATE`.pipe(Effect.orDie),
        then: held(Context.get(first, JobParking)),
        second: racing(Context.get(second, JobParking)),
        waitsIn: "approval_decisions"
      })
      const decisions = yield* sql<{ approved: boolean; reason: string | null }>`
        SELECT approved, reason FROM approval_decisions WHERE approval_id = ${APPROVAL}`
      return { held: outcome.first, racing: outcome.second, decisions }
    })
  return { race }
})

describe(`a parked job's approval decided by two at once (${backend})`, () => {
  it.live.skipIf(backend !== "postgres")("two decisions: the one that waited on the other's lock answers decided-already", () =>
    Effect.gen(function*() {
      const { race } = yield* parkedJob
      const decide = (parking: JobParking["Service"]) => parking.decide(CHAT, APPROVAL, { approved: true })
      const outcome = yield* race(decide, decide)
      assert.strictEqual(outcome.held, "decided")
      assert.strictEqual(outcome.racing, "decided-already")
      assert.deepStrictEqual(outcome.decisions, [{ approved: true, reason: null }])
    }).pipe(Effect.scoped), { timeout: 30_000 })

  it.live.skipIf(backend !== "postgres")("the user's decision as the job's wait runs out: the job reads the user's, not a denial", () =>
    Effect.gen(function*() {
      const { race } = yield* parkedJob
      const outcome = yield* race(
        (parking) => parking.decide(CHAT, APPROVAL, { approved: true, reason: "go ahead" }),
        (parking) => parking.decision(JOB, CHAT, CHECKPOINT, TIMED_OUT)
      )
      assert.strictEqual(outcome.held, "decided")
      assert.deepStrictEqual(outcome.racing, { approved: true, reason: "go ahead" })
      assert.deepStrictEqual(outcome.decisions, [{ approved: true, reason: "go ahead" }])
    }).pipe(Effect.scoped), { timeout: 30_000 })

  it.live.skipIf(backend !== "postgres")("the job's wait runs out as the user decides: the denial holds, the user's decision is a 409", () =>
    Effect.gen(function*() {
      const { race } = yield* parkedJob
      const outcome = yield* race(
        (parking) => parking.decision(JOB, CHAT, CHECKPOINT, TIMED_OUT),
        (parking) => parking.decide(CHAT, APPROVAL, { approved: true })
      )
      assert.deepStrictEqual(outcome.held, { approved: false, reason: TIMED_OUT })
      assert.strictEqual(outcome.racing, "decided-already")
      assert.deepStrictEqual(outcome.decisions, [{ approved: false, reason: TIMED_OUT }])
    }).pipe(Effect.scoped), { timeout: 30_000 })
})

