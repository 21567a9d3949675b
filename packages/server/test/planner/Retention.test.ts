/**
 * Retention of persisted planner decisions (docs/planner.md:
 * decisions are retained within a bounded window): the prune route and the
 * periodic sweep delete the decisions of tasks terminal for longer than
 * PLANNER_DECISION_RETENTION, keep the others, and replicas sweeping at once
 * delete each row once without waiting for each other.
 *
 * Time passes by moving a task's end into the past (`endedAgo`): the sweep
 * compares `planner_decisions.task_terminal_at`, the copy of the task's
 * `terminal_at` made when its result arrives, so both are moved together.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Cause, ConfigProvider, Deferred, Effect, Exit, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { DecisionRetention, nextBatchSize, parseRetention } from "../../src/planner/DecisionRetention.ts"
import { UsageRepo } from "../../src/usage/UsageRepo.ts"
import { DecisionsRepo, PRUNE_LOCK } from "../../src/planner/DecisionsRepo.ts"
import { client, decisionBody, layerPlannerServer, plannerEnv, startReplicas } from "../support/ControlPlane.ts"
import type { Client } from "../support/ControlPlane.ts"
import { FakeOpenAiServer, openAiReply as reply } from "@switchboard/providers/testing"
import { backend } from "../support/TestDatabase.ts"
import { baseUrl } from "../support/TestServer.ts"

// These tests start their own database inside the test: on a loaded machine the embedded one takes a while.
const STARTS_A_DATABASE = 120_000

const endedAgo = (taskId: string, interval: string) =>
  SqlClient.SqlClient.use((sql) =>
    Effect.gen(function*() {
      yield* sql`UPDATE tasks SET terminal_at = now() - ${interval}::interval WHERE id = ${taskId}`
      yield* sql`UPDATE planner_decisions SET task_terminal_at = now() - ${interval}::interval WHERE task_id = ${taskId}`
    })
  )

const decisionCount = (taskId: string) =>
  SqlClient.SqlClient.use((sql) =>
    Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM planner_decisions WHERE task_id = ${taskId}`, (r) => r[0]!.n)
  )

/** A task with `steps` decisions made through the proxy, left running or ended. */
const taskWithDecisions = (c: Client, steps: number, end: "running" | "succeeded" | "failed") =>
  Effect.gen(function*() {
    const host = yield* c.addHost()
    yield* c.addTask("keep or prune", host.hostId)
    const task = yield* c.claim(host)
    for (let i = 0; i < steps; i++) {
      const res = yield* c.decision(host.token, decisionBody(host, task))
      assert.strictEqual(res.status, 200, res.text)
    }
    if (end !== "running") {
      const res = yield* c.hostPost(host.token, `/internal/tasks/${task.taskId}/result`, {
        hostId: host.hostId, attempt: task.attempt, status: end, output: null
      })
      assert.strictEqual(res.status, 200)
    }
    return task.taskId
  })

const withProfile = Effect.gen(function*() {
  const c = client(yield* baseUrl)
  const fake = yield* FakeOpenAiServer
  fake.respondWith(() => reply.toolCalls([{ name: "click", arguments: "{\"x\":1,\"y\":1}" }]))
  const profiles = yield* c.admin.get("/admin/provider-profiles")
  if (profiles.json.profiles.length === 0) {
    yield* c.activate(yield* c.addProfile({
      name: "retention", provider: "openai-compatible", model: "m", timeoutMs: 5_000, baseUrl: fake.url, apiKey: "sk-r"
    }))
  }
  return c
})

describe("PLANNER_DECISION_RETENTION", () => {
  it("is N seconds|minutes|hours|days", () => {
    assert.strictEqual(parseRetention("7 days"), 7 * 86_400_000)
    assert.strictEqual(parseRetention("1 second"), 1_000)
    assert.strictEqual(parseRetention("90 Minutes"), 90 * 60_000)
    assert.strictEqual(parseRetention("12 hours"), 12 * 3_600_000)
    for (const bad of ["", "7", "seven days", "7 weeks", "-1 days", "1.5 hours"]) assert.isUndefined(parseRetention(bad), bad)
  })

  it("the sweep sizes each next batch from the last one's rate, growing at most 16-fold", () => {
    assert.strictEqual(nextBatchSize(5000, 10, 200), 80_000, "20 × would do: capped at 16 ×")
    assert.strictEqual(nextBatchSize(80_000, 400, 200), 40_000, "too slow: halves")
    assert.strictEqual(nextBatchSize(1000, 100, 200), 2000)
    assert.strictEqual(nextBatchSize(7, 0, 200), 112, "a batch faster than a millisecond")
    assert.strictEqual(nextBatchSize(1, 5000, 200), 1, "never below one row")
  })

  it.effect("an unreadable value stops the server at start, naming the variable", () =>
    Effect.gen(function*() {
      const exit = yield* Layer.build(DecisionRetention.layer).pipe(
        Effect.provide(Layer.mock(DecisionsRepo, {})),
        Effect.provide(Layer.mock(UsageRepo, {})),
        Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ PLANNER_DECISION_RETENTION: "7 weeks" }))),
        Effect.scoped,
        Effect.exit
      )
      assert.isTrue(Exit.isFailure(exit))
      assert.include(Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "", "Invalid PLANNER_DECISION_RETENTION \"7 weeks\"")
    }))
})

const server = Layer.mergeAll(layerPlannerServer(plannerEnv({ PLANNER_PRUNE_INTERVAL_SECONDS: "1" })), FakeOpenAiServer.layer())

describe("decision retention", () => {
  layer(server, { excludeTestServices: true })("one server", (it) => {
    it.effect("a result copies the task's end onto its decisions (what the sweep's index reads)", () =>
      Effect.gen(function*() {
        const c = yield* withProfile
        const taskId = yield* taskWithDecisions(c, 2, "succeeded")
        const rows = yield* SqlClient.SqlClient.use((sql) => sql<{ same: boolean }>`
          SELECT d.task_terminal_at = t.terminal_at AS same FROM planner_decisions d JOIN tasks t ON t.id = d.task_id
          WHERE d.task_id = ${taskId}`)
        assert.deepStrictEqual(rows.map((r) => r.same), [true, true])
      }))

    it.effect("A task's retention window has elapsed since reaching a terminal state", () =>
      Effect.gen(function*() {
        const c = yield* withProfile
        const succeeded = yield* taskWithDecisions(c, 3, "succeeded")
        const failed = yield* taskWithDecisions(c, 2, "failed")
        yield* endedAgo(succeeded, "8 days")
        yield* endedAgo(failed, "7 days 1 minute")
        const pruned = yield* c.admin.post("/admin/planner-decisions/prune")
        assert.strictEqual(pruned.status, 200)
        assert.isAtLeast(pruned.json.deleted, 0, "the periodic sweep may have taken some first")
        assert.strictEqual(yield* decisionCount(succeeded), 0)
        assert.strictEqual(yield* decisionCount(failed), 0)
        const listed = yield* c.admin.get(`/admin/planner-decisions?taskId=${succeeded}`)
        assert.deepStrictEqual(listed.json.decisions, [])
        const task = yield* c.admin.get(`/admin/tasks/${succeeded}`)
        assert.strictEqual(task.json.status, "succeeded", "the task itself stays")
      }))

    it.effect("A task is still active or within its retention window", () =>
      Effect.gen(function*() {
        const c = yield* withProfile
        const active = yield* taskWithDecisions(c, 2, "running")
        const recent = yield* taskWithDecisions(c, 2, "succeeded")
        const almost = yield* taskWithDecisions(c, 1, "failed")
        yield* endedAgo(almost, "6 days 23 hours")
        const expired = yield* taskWithDecisions(c, 1, "succeeded")
        yield* endedAgo(expired, "30 days")
        const pruned = yield* c.admin.post("/admin/planner-decisions/prune")
        assert.strictEqual(pruned.status, 200)
        assert.strictEqual(yield* decisionCount(expired), 0)
        for (const [taskId, n] of [[active, 2], [recent, 2], [almost, 1]] as const) {
          const listed = yield* c.admin.get(`/admin/planner-decisions?taskId=${taskId}`)
          assert.strictEqual(listed.json.decisions.length, n, `${taskId} keeps its decisions`)
        }
      }))

    it.effect("the periodic sweep runs without the route", () =>
      Effect.gen(function*() {
        const c = yield* withProfile
        const old = yield* taskWithDecisions(c, 2, "succeeded")
        yield* endedAgo(old, "10 days")
        // PLANNER_PRUNE_INTERVAL_SECONDS=1 (±20 %): within a few ticks the decisions are gone.
        for (let i = 0; i < 50 && (yield* decisionCount(old)) > 0; i++) yield* Effect.sleep("100 millis")
        assert.strictEqual(yield* decisionCount(old), 0)
      }))
  })
})

/** Decisions of one long-ended task, inserted directly: the sweep is under test here, not the endpoint. */
const seedEnded = (count: number) =>
  SqlClient.SqlClient.use((sql) =>
    Effect.gen(function*() {
      const taskId = `task_seed_${count}_${Math.random().toString(36).slice(2)}`
      yield* sql`INSERT INTO tasks (id, goal, status, terminal_at) VALUES (${taskId}, 'seed', 'succeeded', now() - interval '30 days')`
      yield* sql`
        INSERT INTO planner_decisions (task_id, attempt, step_index, system_prompt, user_prompt, tool_name, arguments, task_terminal_at)
        SELECT ${taskId}, 1, i, 's', 'u', 'click', '{}'::jsonb, now() - interval '30 days' FROM generate_series(0, ${count - 1}) AS i`
      return taskId
    })
  )

describe(`retention sweeps by two replicas on ${backend}`, () => {
  it.live("replicas pruning at once delete each row once, in bounded batches", () =>
    Effect.gen(function*() {
      const env = plannerEnv({ PLANNER_PRUNE_BATCH_SIZE: "7", PLANNER_PRUNE_INTERVAL_SECONDS: "3600" })
      const { inspect, urls } = yield* startReplicas([env, env])
      const taskId = yield* seedEnded(120).pipe(Effect.provide(inspect))
      const [a, b] = yield* Effect.forEach(urls, (u) => client(u).admin.post("/admin/planner-decisions/prune"), { concurrency: 2 })
      assert.strictEqual(a!.status, 200)
      assert.strictEqual(b!.status, 200)
      assert.strictEqual(a!.json.deleted + b!.json.deleted, 120, "each row deleted once")
      assert.strictEqual(yield* decisionCount(taskId).pipe(Effect.provide(inspect)), 0)
    }).pipe(Effect.scoped), STARTS_A_DATABASE)

  // Needs a second session holding the sweep's lock while the sweep runs: the embedded database is a single session.
  it.live.skipIf(backend !== "postgres")("a sweep while another replica's batch runs stops at once instead of waiting (PostgreSQL only)", () =>
    Effect.gen(function*() {
      const env = plannerEnv({ PLANNER_PRUNE_BATCH_SIZE: "5", PLANNER_PRUNE_INTERVAL_SECONDS: "3600" })
      const { inspect, urls } = yield* startReplicas([env])
      const c = client(urls[0]!)
      const a = yield* seedEnded(10).pipe(Effect.provide(inspect))
      const b = yield* seedEnded(10).pipe(Effect.provide(inspect))
      const locked = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      // Another replica's batch, mid-statement: it holds the sweep's advisory lock (and, as a DELETE would, rows of `a`).
      const holder = yield* Effect.forkChild(SqlClient.SqlClient.use((sql) =>
        sql.withTransaction(Effect.gen(function*() {
          const [lock] = yield* sql<{ ours: boolean }>`SELECT pg_try_advisory_xact_lock(${PRUNE_LOCK}) AS ours`
          assert.isTrue(lock!.ours)
          yield* sql`SELECT id FROM planner_decisions WHERE task_id = ${a} FOR UPDATE`
          yield* Deferred.succeed(locked, undefined)
          yield* Deferred.await(release)
        }))
      ).pipe(Effect.provide(inspect)))
      yield* Deferred.await(locked)
      const during = yield* c.admin.post("/admin/planner-decisions/prune")
      assert.strictEqual(during.status, 200)
      assert.strictEqual(during.json.deleted, 0, "the other replica is sweeping: this one leaves it the rows, without waiting")
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      const after = yield* c.admin.post("/admin/planner-decisions/prune")
      assert.strictEqual(after.json.deleted, 20, "in batches of 5, until one comes back short")
      assert.strictEqual(yield* decisionCount(a).pipe(Effect.provide(inspect)), 0)
      assert.strictEqual(yield* decisionCount(b).pipe(Effect.provide(inspect)), 0)
    }).pipe(Effect.scoped), STARTS_A_DATABASE)
})
