/**
 * How many times a task is tried (`TASK_MAX_ATTEMPTS`, docs/planner.md): a task whose last attempt
 * loses its host — its lease runs out, or the host is revoked — is not handed out again. It reads
 * `failed` at once, with an output that says why; the planner's sweep writes it down and stamps its
 * decisions, so that their retention window starts.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { FakeOpenAi } from "@switchboard/providers/testing"
import { client, decisionBody, expireLease, layerPlannerServer, plannerEnv } from "../support/ControlPlane.ts"
import { baseUrl } from "../support/TestServer.ts"

/** What the database holds of a task and its decisions (not the view's computed status). */
const stored = (taskId: string) =>
  SqlClient.SqlClient.use((sql) =>
    Effect.gen(function*() {
      const task = (yield* sql<{ status: string; terminal: boolean }>`
        SELECT status, terminal_at IS NOT NULL AS terminal FROM tasks WHERE id = ${taskId}`)[0]!
      const decisions = yield* sql<{ stamped: boolean }>`
        SELECT task_terminal_at IS NOT NULL AS stamped FROM planner_decisions WHERE task_id = ${taskId}`
      return { ...task, decisions: decisions.map((d) => d.stamped) }
    })
  )

const click = FakeOpenAi.reply.toolCalls([{ name: "click", arguments: JSON.stringify({ x: 1, y: 1 }) }])

describe("TASK_MAX_ATTEMPTS", () => {
  layer(
    Layer.merge(
      // A sweep every second, so that the test sees the failure written down.
      layerPlannerServer(plannerEnv({ TASK_MAX_ATTEMPTS: "2", PLANNER_PRUNE_INTERVAL_SECONDS: "1" })),
      FakeOpenAi.FakeOpenAiServer.layer()
    ),
    { excludeTestServices: true }
  )("two attempts", (it) => {
    it.effect("the last attempt's lease runs out: failed at once for every read, claim and cancel; the sweep writes it down and stamps its decisions", () =>
      Effect.gen(function*() {
        const c = client(yield* baseUrl)
        const openai = yield* FakeOpenAi.FakeOpenAiServer
        openai.reset()
        const { host: a, task } = yield* c.readyHost(openai.url, { host: "a" })
        const b = yield* c.addHost("b")
        openai.enqueue(click)
        assert.strictEqual((yield* c.decision(a.token, decisionBody(a, task))).status, 200)
        yield* expireLease(task.taskId)
        assert.deepInclude((yield* c.admin.get(`/admin/tasks/${task.taskId}`)).json, { status: "queued", attempt: 2 })

        // The reservation holds it for a: a takes it again, as attempt 2 — its last.
        const second = yield* c.claim(a)
        assert.deepInclude(second, { taskId: task.taskId, attempt: 2 })
        openai.enqueue(click)
        assert.strictEqual((yield* c.decision(a.token, decisionBody(a, second))).status, 200)
        yield* expireLease(task.taskId)

        const view = (yield* c.admin.get(`/admin/tasks/${task.taskId}`)).json
        assert.deepInclude(view, { status: "failed", attempt: 2, hostId: a.hostId })
        assert.isString(view.terminalAt)
        assert.include(view.output, "gave up after 2 attempts (TASK_MAX_ATTEMPTS)")
        assert.include(view.output, "lease ran out")
        const failed = (yield* c.admin.get("/admin/tasks?status=failed")).json.tasks as Array<{ taskId: string }>
        assert.include(failed.map((t) => t.taskId), task.taskId)

        for (const host of [a, b]) {
          const none = yield* c.hostPost(host.token, `/internal/hosts/${host.hostId}/claim`)
          assert.strictEqual(none.status, 204, "never handed out again")
        }
        const late = yield* c.hostPost(a.token, `/internal/tasks/${task.taskId}/lease`, { hostId: a.hostId, attempt: 2 })
        assert.strictEqual(late.status, 409)
        assert.strictEqual(late.json.code, "lease_lost")
        const cancel = yield* c.admin.post(`/admin/tasks/${task.taskId}/cancel`)
        assert.strictEqual(cancel.status, 409, cancel.text)
        assert.deepInclude(cancel.json, { code: "task_terminal", status: "failed" })

        // Written down by the sweep (every second here), its decisions stamped for retention.
        const written = yield* stored(task.taskId).pipe(
          Effect.repeat({ schedule: Schedule.spaced("100 millis"), until: (s) => s.status === "failed" })
        )
        assert.deepStrictEqual(written, { status: "failed", terminal: true, decisions: [true, true] })
        const after = (yield* c.admin.get(`/admin/tasks/${task.taskId}`)).json
        assert.deepStrictEqual(after, view, "the same task, read before and after it was written down")
      }))

    it.effect("a host revoked during a task's last attempt: the task fails, its decisions stamped; an earlier attempt is re-queued", () =>
      Effect.gen(function*() {
        const c = client(yield* baseUrl)
        const openai = yield* FakeOpenAi.FakeOpenAiServer
        openai.reset()
        const { host: a, task: first } = yield* c.readyHost(openai.url, { host: "a" })
        const b = yield* c.addHost("b")
        yield* expireLease(first.taskId)
        const last = yield* c.claim(a)
        assert.deepInclude(last, { taskId: first.taskId, attempt: 2 })
        openai.enqueue(click)
        assert.strictEqual((yield* c.decision(a.token, decisionBody(a, last))).status, 200)
        const fresh = yield* c.addTask("a's second task", a.hostId)
        const other = yield* c.claim(a)
        assert.deepInclude(other, { taskId: fresh, attempt: 1 })

        assert.strictEqual((yield* c.admin.post(`/admin/hosts/${a.hostId}/revoke`)).status, 200)
        const ended = (yield* c.admin.get(`/admin/tasks/${first.taskId}`)).json
        assert.deepInclude(ended, { status: "failed", attempt: 2, hostId: a.hostId })
        assert.include(ended.output, "host was revoked")
        assert.deepStrictEqual(yield* stored(first.taskId), { status: "failed", terminal: true, decisions: [true] })
        assert.deepInclude((yield* c.admin.get(`/admin/tasks/${fresh}`)).json, { status: "queued", attempt: 2, hostId: null })
        assert.deepInclude(yield* c.claim(b), { taskId: fresh, attempt: 2 }, "the task with attempts left goes to another host")
      }))
  })
})
