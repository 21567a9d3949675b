/**
 * Step indexes and profile switches across replicas: 20 concurrent decisions
 * for one task attempt, sent through two server replicas, get the indexes
 * 0..19, each once, and so do the persisted rows; a profile activated on one
 * replica is the one the other uses on its next request (no cache). On the
 * embedded database the requests are serialised by its single session; the
 * outcome checked is the same.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { backend } from "../support/TestDatabase.ts"
import { client, decisionBody, plannerEnv, startReplicas } from "../support/ControlPlane.ts"
import { FakeOpenAi } from "@switchboard/providers/testing"

// These tests start their own database inside the test: on a loaded machine the embedded one takes a while.
const STARTS_A_DATABASE = 120_000

const CONCURRENT = 20

describe(`planner decisions on ${backend}, two replicas`, () => {
  it.live("20 concurrent decisions for one task attempt get step indexes 0..19, unique; a switch on one replica applies on the other", () =>
    Effect.gen(function*() {
      const fake = yield* FakeOpenAi.scoped()
      let n = 0
      // A little latency so that the requests overlap at the provider and race to persist.
      fake.respondWith(() =>
        FakeOpenAi.reply.json((FakeOpenAi.reply.toolCalls([{ name: "click", arguments: JSON.stringify({ x: ++n, y: 0 }) }]) as any).body, 200, 20)
      )
      const { inspect, urls } = yield* startReplicas([plannerEnv(), plannerEnv()])
      const [a, b] = urls.map((u) => client(u))
      const host = yield* a!.addHost()
      yield* a!.addTask("many steps", host.hostId)
      const task = yield* a!.claim(host)
      const first = yield* a!.addProfile({
        name: "first", provider: "openai-compatible", model: "model-first", timeoutMs: 10_000, baseUrl: fake.url, apiKey: "sk-first"
      })
      yield* a!.activate(first)

      const answers = yield* Effect.forEach(
        Array.from({ length: CONCURRENT }, (_, i) => i),
        (i) => (i % 2 === 0 ? a! : b!).decision(host.token, decisionBody(host, task, { userPrompt: `request ${i}` })),
        { concurrency: "unbounded" }
      )
      for (const res of answers) assert.strictEqual(res.status, 200, res.text)
      const indexes = answers.map((r) => r.json.stepIndex as number).sort((x, y) => x - y)
      assert.deepStrictEqual(indexes, Array.from({ length: CONCURRENT }, (_, i) => i))

      const rows = yield* SqlClient.SqlClient.use((sql) =>
        sql<{ step_index: number; user_prompt: string }>`
          SELECT step_index, user_prompt FROM planner_decisions WHERE task_id = ${task.taskId} AND attempt = 1 ORDER BY step_index`
      ).pipe(Effect.provide(inspect))
      assert.deepStrictEqual(rows.map((r) => r.step_index), indexes)
      // Each answer's index is the one its own row was stored under.
      for (const [i, res] of answers.entries()) {
        assert.strictEqual(rows[res.json.stepIndex]!.user_prompt, `request ${i}`)
      }

      // The other replica switches the profile; the first uses the new one at once.
      const second = yield* b!.addProfile({
        name: "second", provider: "openai-compatible", model: "model-second", timeoutMs: 10_000, baseUrl: fake.url, apiKey: "sk-second"
      })
      yield* b!.activate(second)
      fake.reset()
      fake.respondWith(() => FakeOpenAi.reply.toolCalls([{ name: "finish", arguments: "{\"summary\":\"s\"}" }]))
      const next = yield* a!.decision(host.token, decisionBody(host, task))
      assert.strictEqual(next.status, 200)
      assert.strictEqual(next.json.stepIndex, CONCURRENT)
      assert.strictEqual(fake.chatRequests()[0]?.headers.authorization, "Bearer sk-second")
      assert.strictEqual((fake.chatRequests()[0]?.body as any).model, "model-second")
      const profiles = yield* a!.admin.get("/admin/provider-profiles")
      assert.deepStrictEqual(
        profiles.json.profiles.map((p: { name: string; active: boolean }) => [p.name, p.active]),
        [["first", false], ["second", true]]
      )
    }).pipe(Effect.scoped), STARTS_A_DATABASE)

  it.live("concurrent activations through two replicas leave exactly one profile active; the database refuses a second", () =>
    Effect.gen(function*() {
      const { inspect, urls } = yield* startReplicas([plannerEnv(), plannerEnv()])
      const [a, b] = urls.map((u) => client(u))
      const ids = yield* Effect.forEach(Array.from({ length: 6 }, (_, i) => i), (i) =>
        a!.addProfile({ name: `p${i}`, provider: "anthropic", model: "m", timeoutMs: 1000, apiKey: `sk-${i}` }))
      const answers = yield* Effect.forEach(
        [...ids, ...ids].map((id, i) => [id, i] as const),
        ([id, i]) => (i % 2 === 0 ? a! : b!).admin.post(`/admin/provider-profiles/${id}/activate`),
        { concurrency: "unbounded" }
      )
      for (const res of answers) assert.strictEqual(res.status, 200, res.text)
      const listed = yield* b!.admin.get("/admin/provider-profiles")
      assert.strictEqual(listed.json.profiles.filter((p: { active: boolean }) => p.active).length, 1)

      const active = listed.json.profiles.find((p: { active: boolean }) => p.active).profileId
      const inactive = ids.find((id) => id !== active)!
      const second = yield* SqlClient.SqlClient.use((sql) =>
        sql`UPDATE provider_profiles SET active = true WHERE id = ${inactive}`.pipe(Effect.exit)
      ).pipe(Effect.provide(inspect))
      assert.strictEqual(second._tag, "Failure", "the partial unique index allows one active profile")
    }).pipe(Effect.scoped), STARTS_A_DATABASE)
})
