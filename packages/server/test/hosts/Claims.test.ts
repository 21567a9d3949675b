/**
 * Claims under concurrency: several hosts claiming at once through two
 * server replicas never get the same task, and every queued task is handed
 * out. On PostgreSQL the claims really race (each replica has its own pool);
 * on the embedded database (one session) they are serialised, and the same
 * test checks the same outcome.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { backend } from "../support/TestDatabase.ts"
import { client, plannerEnv, startReplicas } from "../support/ControlPlane.ts"

// These tests start their own database inside the test: on a loaded machine the embedded one takes a while.
const STARTS_A_DATABASE = 120_000

// Fewer on the embedded database: one session serialises every statement, the outcome checked is the same.
const TASKS = backend === "postgres" ? 24 : 10
const HOSTS = backend === "postgres" ? 6 : 4

describe(`claims on ${backend}`, () => {
  it.live("concurrent claimers through two replicas never get the same task; all tasks are handed out, oldest first per host", () =>
    Effect.gen(function*() {
      const { urls } = yield* startReplicas([plannerEnv(), plannerEnv()])
      const [a, b] = urls.map((u) => client(u))
      const hosts = yield* Effect.forEach(Array.from({ length: HOSTS }, (_, i) => i), (i) => a!.addHost(`h${i}`))
      const created: Array<string> = []
      for (let i = 0; i < TASKS; i++) created.push(yield* a!.addTask(`task ${i}`))

      // Each host claims until the queue is empty, half of them through each replica, all at once.
      const claimsOf = (host: { hostId: string; token: string }, i: number) =>
        Effect.gen(function*() {
          const via = i % 2 === 0 ? a! : b!
          const mine: Array<string> = []
          while (true) {
            const res = yield* via.hostPost(host.token, `/internal/hosts/${host.hostId}/claim`)
            if (res.status === 204) return mine
            assert.strictEqual(res.status, 200, res.text)
            mine.push(res.json.task.taskId)
          }
        })
      const perHost = yield* Effect.forEach(hosts, claimsOf, { concurrency: "unbounded" })
      const all = perHost.flat()
      assert.strictEqual(all.length, TASKS, "every task claimed exactly once")
      assert.strictEqual(new Set(all).size, TASKS, "no task claimed twice")
      assert.sameMembers(all, created)
      for (const mine of perHost) {
        const order = mine.map((id) => created.indexOf(id))
        assert.deepStrictEqual(order, [...order].sort((x, y) => x - y), "each host got its tasks oldest first")
      }
      const running = yield* a!.admin.get("/admin/tasks?status=running&limit=1000")
      assert.strictEqual(running.json.tasks.length, TASKS)
    }).pipe(Effect.scoped), STARTS_A_DATABASE)
})
