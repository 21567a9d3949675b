/**
 * The host control plane over HTTP (docs/planner.md, host
 * and admin routes): admin authentication, hosts and their tokens, heartbeats,
 * the task queue, leases and results.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { AdminAuth } from "@switchboard/domain"
import { Cause, ConfigProvider, Effect, Exit, Layer, Redacted } from "effect"
import { HttpServerResponse } from "effect/http"
import * as AdminAuthLayer from "../../src/admin/AdminAuth.ts"
import { SqlClient } from "effect/sql"
import { ADMIN_TOKEN, client, decisionBody, expireLease, layerPlannerServer } from "../support/ControlPlane.ts"
import { baseUrl, postJson, request } from "../support/TestServer.ts"

const api = Effect.map(baseUrl, (base) => client(base))

describe("host control plane", () => {
  layer(layerPlannerServer(), { excludeTestServices: true })("over HTTP", (it) => {
    it.effect("admin routes need ADMIN_TOKEN: 401 without it or with another", () =>
      Effect.gen(function*() {
        for (const headers of [{}, { authorization: "Bearer nope" }, { authorization: `Bearer ${ADMIN_TOKEN}x` }]) {
          const res = yield* request("/admin/hosts", { headers })
          assert.strictEqual(res.status, 401)
          assert.strictEqual(res.json.code, "unauthenticated")
          const post = yield* postJson("/admin/tasks", { goal: "x" }, headers)
          assert.strictEqual(post.status, 401)
        }
      }))

    it.effect("a host is registered with a token shown once; the list never shows it", () =>
      Effect.gen(function*() {
        const c = yield* api
        const host = yield* c.addHost("build-box")
        assert.match(host.token, /^sbh_[A-Za-z0-9_-]{43}$/, "32 random bytes, base64url")
        const list = yield* c.admin.get("/admin/hosts")
        assert.strictEqual(list.status, 200)
        const listed = list.json.hosts.find((h: { hostId: string }) => h.hostId === host.hostId)
        assert.deepStrictEqual(Object.keys(listed).sort(), ["createdAt", "hostId", "lastHeartbeatAt", "name", "revokedAt"])
        assert.strictEqual(listed.lastHeartbeatAt, null)
        assert.notInclude(list.text, host.token)

        const stored = yield* SqlClient.SqlClient.use((sql) => sql<{ t: string }>`SELECT row_to_json(h)::text AS t FROM hosts h`)
        assert.isFalse(stored.some((r) => r.t.includes(host.token)), "only a hash of the token is stored")
      }))

    it.effect("heartbeat answers the server time and records last seen", () =>
      Effect.gen(function*() {
        const c = yield* api
        const host = yield* c.addHost()
        const res = yield* c.hostPost(host.token, `/internal/hosts/${host.hostId}/heartbeat`)
        assert.strictEqual(res.status, 200)
        assert.isFalse(Number.isNaN(Date.parse(res.json.serverTime)))
        const list = yield* c.admin.get("/admin/hosts")
        const listed = list.json.hosts.find((h: { hostId: string }) => h.hostId === host.hostId)
        assert.strictEqual(listed.lastHeartbeatAt, res.json.serverTime)
      }))

    it.effect("heartbeat and claim take `{}` or no body at all", () =>
      Effect.gen(function*() {
        const c = yield* api
        const host = yield* c.addHost()
        const bare = yield* request(`/internal/hosts/${host.hostId}/heartbeat`, {
          method: "POST",
          headers: { authorization: `Bearer ${host.token}` }
        })
        assert.strictEqual(bare.status, 200, bare.text)
        const claim = yield* request(`/internal/hosts/${host.hostId}/claim`, {
          method: "POST",
          headers: { authorization: `Bearer ${host.token}` }
        })
        assert.strictEqual(claim.status, 204, claim.text)
        const json = yield* c.hostPost(host.token, `/internal/hosts/${host.hostId}/heartbeat`, {})
        assert.strictEqual(json.status, 200)
      }))

    it.effect("host routes: 401 without a valid token, 403 for another host's path or body", () =>
      Effect.gen(function*() {
        const c = yield* api
        const a = yield* c.addHost("a")
        const b = yield* c.addHost("b")
        for (const token of ["", "sbh_unknown", ADMIN_TOKEN]) {
          const res = yield* c.hostPost(token, `/internal/hosts/${a.hostId}/heartbeat`)
          assert.strictEqual(res.status, 401)
          assert.strictEqual(res.json.code, "unauthenticated")
        }
        const foreign = yield* c.hostPost(b.token, `/internal/hosts/${a.hostId}/claim`)
        assert.strictEqual(foreign.status, 403)
        assert.strictEqual(foreign.json.code, "forbidden")

        const taskId = yield* c.addTask("a's task", a.hostId)
        const task = yield* c.claim(a)
        assert.strictEqual(task.taskId, taskId)
        const asB = yield* c.hostPost(b.token, `/internal/tasks/${taskId}/lease`, { hostId: a.hostId, attempt: 1 })
        assert.strictEqual(asB.status, 403, "b's token naming a in the body")
        const notB = yield* c.hostPost(b.token, `/internal/tasks/${taskId}/lease`, { hostId: b.hostId, attempt: 1 })
        assert.strictEqual(notB.status, 403, "the task is not assigned to b")
        assert.strictEqual(notB.json.code, "forbidden")
        const result = yield* c.hostPost(b.token, `/internal/tasks/${taskId}/result`, { hostId: b.hostId, attempt: 1, status: "succeeded", output: "x" })
        assert.strictEqual(result.status, 403)
      }))

    it.effect("tasks: queued, claimed oldest first, leased, renewed, reported terminal", () =>
      Effect.gen(function*() {
        const c = yield* api
        const host = yield* c.addHost()
        const first = yield* c.addTask("first", host.hostId)
        const second = yield* c.addTask("second", host.hostId)
        const queued = yield* c.admin.get(`/admin/tasks/${first}`)
        assert.strictEqual(queued.status, 200)
        assert.deepInclude(queued.json, { taskId: first, status: "queued", attempt: 1, hostId: host.hostId, goal: "first" })
        assert.isUndefined(queued.json.terminalAt)

        const claimed = yield* c.claim(host)
        assert.deepInclude(claimed, { taskId: first, attempt: 1, goal: "first" })
        assert.isAbove(Date.parse(claimed.leaseExpiresAt), Date.now())
        const running = yield* c.admin.get(`/admin/tasks/${first}`)
        assert.strictEqual(running.json.status, "running")
        assert.strictEqual(running.json.leaseExpiresAt, claimed.leaseExpiresAt)

        const renewed = yield* c.hostPost(host.token, `/internal/tasks/${first}/lease`, { hostId: host.hostId, attempt: 1 })
        assert.strictEqual(renewed.status, 200)
        assert.isAtLeast(Date.parse(renewed.json.leaseExpiresAt), Date.parse(claimed.leaseExpiresAt))

        const done = yield* c.hostPost(host.token, `/internal/tasks/${first}/result`, {
          hostId: host.hostId, attempt: 1, status: "succeeded", output: { summary: "done" }
        })
        assert.strictEqual(done.status, 200)
        assert.strictEqual(done.json.status, "succeeded")
        assert.isString(done.json.terminalAt)
        assert.deepStrictEqual(done.json.output, { summary: "done" })
        const again = yield* c.hostPost(host.token, `/internal/tasks/${first}/result`, {
          hostId: host.hostId, attempt: 1, status: "failed", output: "late"
        })
        assert.strictEqual(again.status, 409, "a terminal task takes no second result")
        assert.strictEqual(again.json.code, "lease_lost")

        const next = yield* c.claim(host)
        assert.strictEqual(next.taskId, second)
        const none = yield* c.hostPost(host.token, `/internal/hosts/${host.hostId}/claim`)
        assert.strictEqual(none.status, 204, "nothing left for this host")
        assert.strictEqual(none.text, "")
      }))

    it.effect("an expired lease sends the task back to the queue as attempt + 1; the old attempt is refused", () =>
      Effect.gen(function*() {
        const c = yield* api
        const a = yield* c.addHost("a")
        const b = yield* c.addHost("b")
        const taskId = yield* c.addTask("shared work")
        const first = yield* c.claim(a)
        assert.deepInclude(first, { taskId, attempt: 1 })
        yield* expireLease(taskId)

        const view = yield* c.admin.get(`/admin/tasks/${taskId}`)
        assert.deepInclude(view.json, { status: "queued", attempt: 2 }, "shown as the claim will see it")
        const renew = yield* c.hostPost(a.token, `/internal/tasks/${taskId}/lease`, { hostId: a.hostId, attempt: 1 })
        assert.strictEqual(renew.status, 409)
        assert.strictEqual(renew.json.code, "lease_lost")

        const second = yield* c.claim(b)
        assert.deepInclude(second, { taskId, attempt: 2 })
        const late = yield* c.hostPost(b.token, `/internal/tasks/${taskId}/result`, { hostId: b.hostId, attempt: 1, status: "succeeded", output: "" })
        assert.strictEqual(late.status, 409, "attempt 1 is not the current one")
        const decision = yield* c.decision(b.token, decisionBody(b, { taskId, attempt: 1 }))
        assert.strictEqual(decision.status, 409, "nor for a decision")
        assert.strictEqual(decision.json.code, "lease_lost")
        const ok = yield* c.hostPost(b.token, `/internal/tasks/${taskId}/result`, { hostId: b.hostId, attempt: 2, status: "failed", output: "gave up" })
        assert.strictEqual(ok.status, 200)
        assert.deepInclude(ok.json, { status: "failed", attempt: 2, hostId: b.hostId })
      }))

    it.effect("a task reserved for a host is claimed only by it; an unknown host is a 404", () =>
      Effect.gen(function*() {
        const c = yield* api
        const a = yield* c.addHost("a")
        const b = yield* c.addHost("b")
        yield* c.addTask("for a", a.hostId)
        const byB = yield* c.hostPost(b.token, `/internal/hosts/${b.hostId}/claim`)
        assert.strictEqual(byB.status, 204)
        const unknown = yield* c.admin.post("/admin/tasks", { goal: "x", hostId: "host_nope" })
        assert.strictEqual(unknown.status, 404)
        assert.strictEqual(unknown.json.code, "host_not_found")
        const missing = yield* c.admin.get("/admin/tasks/task_nope")
        assert.strictEqual(missing.status, 404)
        assert.strictEqual(missing.json.code, "task_not_found")
        const lease = yield* c.hostPost(a.token, "/internal/tasks/task_nope/lease", { hostId: a.hostId, attempt: 1 })
        assert.strictEqual(lease.status, 404)
        yield* c.claim(a)
      }))

    it.effect("GET /admin/tasks filters by status and host, newest first", () =>
      Effect.gen(function*() {
        const c = yield* api
        const h = yield* c.addHost("lister")
        const older = yield* c.addTask("older", h.hostId)
        const newer = yield* c.addTask("newer", h.hostId)
        const all = yield* c.admin.get(`/admin/tasks?hostId=${h.hostId}`)
        assert.deepStrictEqual(all.json.tasks.map((t: { taskId: string }) => t.taskId), [newer, older])
        yield* c.claim(h)
        const running = yield* c.admin.get(`/admin/tasks?hostId=${h.hostId}&status=running`)
        assert.deepStrictEqual(running.json.tasks.map((t: { taskId: string }) => t.taskId), [older])
        const bad = yield* c.admin.get("/admin/tasks?status=sleeping")
        assert.strictEqual(bad.status, 400)
        assert.strictEqual(bad.json.code, "invalid_request")
      }))
  })

  // Without ADMIN_TOKEN the middleware of the admin group (every /admin route) refuses every credential;
  // checked on the middleware itself: a second embedded database for one assertion costs seconds.
  for (const unset of [{}, { ADMIN_TOKEN: "" }, { ADMIN_TOKEN: "   " }]) {
    it.effect(`without ADMIN_TOKEN (${JSON.stringify(unset)}) every admin request is a 401, even a bearer of the empty token`, () =>
      Effect.gen(function*() {
        const auth = yield* AdminAuth
        for (const credential of ["", " ", "anything", ADMIN_TOKEN]) {
          const reached = { value: false }
          const handler = Effect.sync(() => {
            reached.value = true
            return HttpServerResponse.empty()
          })
          // The middleware reads no request service: run it bare.
          const guarded = auth.adminToken(handler, { credential: Redacted.make(credential) } as never) as Effect.Effect<unknown, unknown>
          const exit = yield* Effect.exit(guarded)
          assert.isTrue(Exit.isFailure(exit))
          assert.isFalse(reached.value, "the route's handler never runs")
          const error = Exit.isFailure(exit) ? Cause.squash(exit.cause) as { code?: string; error?: string } : {}
          assert.strictEqual(error.code, "unauthenticated")
          assert.include(error.error, "ADMIN_TOKEN")
        }
      }).pipe(Effect.provide(AdminAuthLayer.layer.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(unset)))))))
  }
})
