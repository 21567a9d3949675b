/**
 * The operator's lifecycle of hosts and tasks, over two
 * replicas on one database: a revoked or rotated token is refused by the
 * replica that did not revoke it, from the very next request; a revoked
 * host's running task goes back to the queue for another host; a cancelled
 * task ends as `cancelled` and its host's next call is a 409
 * `task_cancelled`.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { client, databaseText, decisionBody, plannerEnv, startReplicas } from "../support/ControlPlane.ts"
import { backend } from "../support/TestDatabase.ts"

const twoReplicas = Effect.gen(function*() {
  const { inspect, urls } = yield* startReplicas([plannerEnv(), plannerEnv()])
  return { one: client(urls[0]!), two: client(urls[1]!), inspect }
})

/** The two replicas, started once for the file (each test uses its own hosts and tasks). */
class Replicas extends Context.Service<Replicas, Effect.Success<typeof twoReplicas>>()("test/hosts/Lifecycle/Replicas") {}

/** Many round trips each, on a machine the other test files share. */
const slow = 120_000

describe(`host and task lifecycle, two replicas on one ${backend} database`, () => {
  layer(Layer.effect(Replicas, twoReplicas), { excludeTestServices: true, timeout: "2 minutes" })("operator", (it) => {
    it.effect("a revoked host's token is refused at once by every replica; its running task goes to another host", () =>
      Effect.gen(function*() {
        const { inspect, one, two } = yield* Replicas
        const a = yield* one.addHost("a")
        const b = yield* one.addHost("b")
        const taskId = yield* one.addTask("a's work", a.hostId)
        const later = yield* one.addTask("reserved for a, never claimed", a.hostId)
        const claimed = yield* two.claim(a)
        assert.deepInclude(claimed, { taskId, attempt: 1 })
        assert.strictEqual((yield* two.hostPost(a.token, `/internal/hosts/${a.hostId}/heartbeat`)).status, 200)

        const revoked = yield* one.admin.post(`/admin/hosts/${a.hostId}/revoke`)
        assert.strictEqual(revoked.status, 200, revoked.text)
        assert.strictEqual(revoked.json.hostId, a.hostId)
        assert.isString(revoked.json.revokedAt)

        // The other replica refuses the token from the next request on: no cache to wait for.
        const heartbeat = yield* two.hostPost(a.token, `/internal/hosts/${a.hostId}/heartbeat`)
        assert.strictEqual(heartbeat.status, 401)
        assert.strictEqual(heartbeat.json.code, "unauthenticated")
        for (const [path, body] of [
          [`/internal/tasks/${taskId}/lease`, { hostId: a.hostId, attempt: 1 }],
          [`/internal/tasks/${taskId}/result`, { hostId: a.hostId, attempt: 1, status: "succeeded", output: "late" }],
          ["/internal/planner/decision", decisionBody(a, claimed)],
          [`/internal/hosts/${a.hostId}/claim`, {}]
        ] as const) {
          const res = yield* two.hostPost(a.token, path, body)
          assert.strictEqual(res.status, 401, path)
        }

        // Listed with its revocation; its task queued again as the next attempt, for any host.
        const hosts = (yield* two.admin.get("/admin/hosts")).json.hosts as Array<{ hostId: string; revokedAt: string | null }>
        assert.strictEqual(hosts.find((h) => h.hostId === a.hostId)?.revokedAt, revoked.json.revokedAt)
        assert.isNull(hosts.find((h) => h.hostId === b.hostId)?.revokedAt)
        const view = yield* two.admin.get(`/admin/tasks/${taskId}`)
        assert.deepInclude(view.json, { status: "queued", attempt: 2, hostId: null }, "no host holds it, the revoked one least")
        const listed = (yield* two.admin.get(`/admin/tasks?hostId=${a.hostId}`)).json.tasks as Array<{ taskId: string }>
        assert.notInclude(listed.map((t) => t.taskId), taskId, "not listed under the revoked host")
        const taken = yield* two.claim(b)
        assert.deepInclude(taken, { taskId, attempt: 2 })
        const done = yield* two.hostPost(b.token, `/internal/tasks/${taskId}/result`, {
          hostId: b.hostId, attempt: 2, status: "succeeded", output: "done by b"
        })
        assert.strictEqual(done.status, 200, done.text)
        assert.deepInclude(done.json, { status: "succeeded", attempt: 2, hostId: b.hostId })
        assert.deepInclude((yield* two.claim(b)), { taskId: later, attempt: 1 }, "the reservation went with the host")

        // The host's row and history stay; revoking again changes nothing.
        const again = yield* two.admin.post(`/admin/hosts/${a.hostId}/revoke`)
        assert.strictEqual(again.status, 200)
        assert.strictEqual(again.json.revokedAt, revoked.json.revokedAt)
        const rotate = yield* two.admin.post(`/admin/hosts/${a.hostId}/rotate-token`)
        assert.strictEqual(rotate.status, 409)
        assert.strictEqual(rotate.json.code, "host_revoked")
        const reserve = yield* one.admin.post("/admin/tasks", { goal: "x", hostId: a.hostId })
        assert.strictEqual(reserve.status, 409, "no task is reserved for a revoked host")
        assert.deepInclude(reserve.json, { code: "host_revoked", hostId: a.hostId })
        const rows = yield* SqlClient.SqlClient.use((sql) => sql<{ n: number }>`
          SELECT count(*)::int AS n FROM hosts WHERE id = ${a.hostId}`).pipe(Effect.provide(inspect))
        assert.strictEqual(rows[0]!.n, 1)

        for (const path of ["/admin/hosts/host_nope/revoke", "/admin/hosts/host_nope/rotate-token"]) {
          const missing = yield* one.admin.post(path)
          assert.strictEqual(missing.status, 404, path)
          assert.strictEqual(missing.json.code, "host_not_found")
        }
      }), slow)

    it.effect("a rotated token: the new one works everywhere at once, the old one nowhere", () =>
      Effect.gen(function*() {
        const { inspect, one, two } = yield* Replicas
        const h = yield* one.addHost("rotating")
        const taskId = yield* one.addTask("keeps running across the rotation", h.hostId)
        const claimed = yield* two.claim(h)

        const rotated = yield* one.admin.post(`/admin/hosts/${h.hostId}/rotate-token`)
        assert.strictEqual(rotated.status, 200, rotated.text)
        assert.strictEqual(rotated.json.hostId, h.hostId)
        assert.match(rotated.json.token, /^sbh_[A-Za-z0-9_-]{43}$/)
        assert.notStrictEqual(rotated.json.token, h.token)

        const old = yield* two.hostPost(h.token, `/internal/hosts/${h.hostId}/heartbeat`)
        assert.strictEqual(old.status, 401)
        assert.strictEqual((yield* one.hostPost(h.token, `/internal/tasks/${taskId}/lease`, { hostId: h.hostId, attempt: 1 })).status, 401)
        assert.strictEqual((yield* two.hostPost(rotated.json.token, `/internal/hosts/${h.hostId}/heartbeat`)).status, 200)
        // The task is untouched: the host goes on with it under the new token.
        const renewed = yield* two.hostPost(rotated.json.token, `/internal/tasks/${taskId}/lease`, { hostId: h.hostId, attempt: claimed.attempt })
        assert.strictEqual(renewed.status, 200, renewed.text)

        const { text } = yield* databaseText.pipe(Effect.provide(inspect))
        assert.notInclude(text, rotated.json.token, "only the new token's hash is stored")
        assert.notInclude((yield* one.admin.get("/admin/hosts")).text, rotated.json.token)
      }), slow)

    it.effect("cancel: a queued task is never claimed; a running one's host gets 409 task_cancelled on every call", () =>
      Effect.gen(function*() {
        const { inspect, one, two } = yield* Replicas
        const h = yield* one.addHost("worker")
        const running = yield* one.addTask("running when cancelled", h.hostId)
        const queued = yield* one.addTask("queued when cancelled", h.hostId)
        const claimed = yield* two.claim(h)
        assert.strictEqual(claimed.taskId, running)
        // A decision recorded before the cancel (as the planner proxy stores one).
        yield* SqlClient.SqlClient.use((sql) => sql`
          INSERT INTO planner_decisions (task_id, attempt, step_index, system_prompt, user_prompt, tool_name, arguments)
          VALUES (${running}, 1, 0, 's', 'u', 'click', '{}'::jsonb)`).pipe(Effect.provide(inspect))

        const cancelQueued = yield* one.admin.post(`/admin/tasks/${queued}/cancel`)
        assert.strictEqual(cancelQueued.status, 200, cancelQueued.text)
        assert.deepInclude(cancelQueued.json, { taskId: queued, status: "cancelled", attempt: 1 })
        assert.isString(cancelQueued.json.terminalAt)
        const cancelRunning = yield* one.admin.post(`/admin/tasks/${running}/cancel`)
        assert.strictEqual(cancelRunning.status, 200, cancelRunning.text)
        assert.deepInclude(cancelRunning.json, { taskId: running, status: "cancelled", attempt: 1 })
        assert.isUndefined(cancelRunning.json.leaseExpiresAt)

        for (const [path, body] of [
          [`/internal/tasks/${running}/lease`, { hostId: h.hostId, attempt: 1 }],
          [`/internal/tasks/${running}/result`, { hostId: h.hostId, attempt: 1, status: "failed", output: "x" }],
          ["/internal/planner/decision", decisionBody(h, claimed)]
        ] as const) {
          const res = yield* two.hostPost(h.token, path, body)
          assert.strictEqual(res.status, 409, `${path}: ${res.text}`)
          assert.strictEqual(res.json.code, "task_cancelled", path)
          assert.strictEqual(res.json.taskId, running)
        }
        const claim = yield* two.hostPost(h.token, `/internal/hosts/${h.hostId}/claim`)
        assert.strictEqual(claim.status, 204, "a cancelled task is never claimed")

        const listed = (yield* two.admin.get(`/admin/tasks?status=cancelled&hostId=${h.hostId}`)).json.tasks as Array<{ taskId: string }>
        assert.deepStrictEqual(listed.map((t) => t.taskId).sort(), [queued, running].sort())
        for (const taskId of [queued, running]) {
          const again = yield* two.admin.post(`/admin/tasks/${taskId}/cancel`)
          assert.strictEqual(again.status, 409)
          assert.deepInclude(again.json, { code: "task_terminal", taskId, status: "cancelled" })
        }
        const missing = yield* one.admin.post("/admin/tasks/task_nope/cancel")
        assert.strictEqual(missing.status, 404)
        assert.strictEqual(missing.json.code, "task_not_found")

        // Terminal, so its decisions are in the retention window like any ended task's.
        const stamped = yield* SqlClient.SqlClient.use((sql) => sql<{ stamped: boolean }>`
          SELECT task_terminal_at IS NOT NULL AS stamped FROM planner_decisions WHERE task_id = ${running}`).pipe(Effect.provide(inspect))
        assert.deepStrictEqual(stamped.map((r) => r.stamped), [true])
      }), slow)

    it.effect("a finished task cannot be cancelled: 409 task_terminal with its status", () =>
      Effect.gen(function*() {
        const { one } = yield* Replicas
        const h = yield* one.addHost()
        const taskId = yield* one.addTask("quick", h.hostId)
        yield* one.claim(h)
        const done = yield* one.hostPost(h.token, `/internal/tasks/${taskId}/result`, { hostId: h.hostId, attempt: 1, status: "succeeded", output: "ok" })
        assert.strictEqual(done.status, 200)
        const cancel = yield* one.admin.post(`/admin/tasks/${taskId}/cancel`)
        assert.strictEqual(cancel.status, 409)
        assert.deepInclude(cancel.json, { code: "task_terminal", status: "succeeded" })
        assert.strictEqual((yield* one.admin.get(`/admin/tasks/${taskId}`)).json.status, "succeeded")
      }), slow)

    it.effect("a result whose output a task cannot store is a 413 and changes nothing; a fitting one then ends the task", () =>
      Effect.gen(function*() {
        const { one } = yield* Replicas
        const h = yield* one.addHost()
        const taskId = yield* one.addTask("big output", h.hostId)
        yield* one.claim(h)
        // 4 MiB of text and then some: under the 10 MiB body limit, over what a stored value may be.
        const huge = "x".repeat(4 * 1024 * 1024 + 16)
        const refused = yield* one.hostPost(h.token, `/internal/tasks/${taskId}/result`, { hostId: h.hostId, attempt: 1, status: "succeeded", output: { report: huge } })
        assert.strictEqual(refused.status, 413, refused.text)
        assert.strictEqual(refused.json.code, "payload_too_large")
        assert.match(refused.json.error, /at output: \d+ bytes of JSON; a task stores at most \d+/)
        assert.strictEqual((yield* one.admin.get(`/admin/tasks/${taskId}`)).json.status, "running")
        const done = yield* one.hostPost(h.token, `/internal/tasks/${taskId}/result`, { hostId: h.hostId, attempt: 1, status: "succeeded", output: { report: "short" } })
        assert.strictEqual(done.status, 200, done.text)
        assert.deepStrictEqual(done.json.output, { report: "short" })
      }), slow)
  })
})
