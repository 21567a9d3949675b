/**
 * What bounds a task's decision log: an attempt takes at most `PLANNER_MAX_STEPS` decisions
 * (409 `step_limit` after, before any provider call), and `GET /admin/planner-decisions` answers a
 * page at a time — `limit` decisions at most, ending before 16 MiB of prompts and arguments, with
 * `nextAfter` when more follow.
 */
import { assert, describe, layer } from "@effect/vitest"
import { maxStoredValueBytes } from "@switchboard/domain"
import { Effect, Layer } from "effect"
import { FakeOpenAi } from "@switchboard/providers/testing"
import { client, decisionBody, layerPlannerServer, plannerEnv } from "../support/ControlPlane.ts"
import { baseUrl } from "../support/TestServer.ts"

/** The OpenAI fake, emptied, behind a freshly activated profile; a host holding a fresh task. */
const ready = Effect.gen(function*() {
  const c = client(yield* baseUrl)
  const openai = yield* FakeOpenAi.FakeOpenAiServer
  openai.reset()
  const { host, task } = yield* c.readyHost(openai.url)
  return { c, openai, host, task }
})

const click = (n: number) => FakeOpenAi.reply.toolCalls([{ name: "click", arguments: JSON.stringify({ x: n, y: n }) }])

describe("the bounds of a task's decision log", () => {
  layer(
    Layer.merge(layerPlannerServer(plannerEnv({ PLANNER_MAX_STEPS: "3" })), FakeOpenAi.FakeOpenAiServer.layer()),
    { excludeTestServices: true }
  )("PLANNER_MAX_STEPS=3", (it) => {
    it.effect("the 4th decision of an attempt is a 409 step_limit: no provider call, nothing recorded", () =>
      Effect.gen(function*() {
        const { c, host, openai, task } = yield* ready
        for (const n of [0, 1, 2]) {
          openai.enqueue(click(n))
          const decided = yield* c.decision(host.token, decisionBody(host, task))
          assert.strictEqual(decided.status, 200, decided.text)
          assert.strictEqual(decided.json.stepIndex, n)
        }
        const calls = openai.chatRequests().length
        const refused = yield* c.decision(host.token, decisionBody(host, task))
        assert.strictEqual(refused.status, 409, refused.text)
        assert.strictEqual(refused.json.code, "step_limit")
        assert.strictEqual(refused.json.limit, 3)
        assert.strictEqual(refused.json.taskId, task.taskId)
        assert.include(refused.json.error, "PLANNER_MAX_STEPS")
        assert.strictEqual(openai.chatRequests().length, calls, "no provider call")
        const log = yield* c.admin.get(`/admin/planner-decisions?taskId=${task.taskId}`)
        assert.deepStrictEqual(log.json.decisions.map((d: { stepIndex: number }) => d.stepIndex), [0, 1, 2])
        assert.isUndefined(log.json.nextAfter)
      }))

    it.effect("two decisions racing for an attempt's last step: one is recorded, the other a 409 step_limit (not lease_lost)", () =>
      Effect.gen(function*() {
        const { c, host, openai, task } = yield* ready
        for (const n of [0, 1]) {
          openai.enqueue(click(n))
          assert.strictEqual((yield* c.decision(host.token, decisionBody(host, task))).status, 200)
        }
        // The first to reach the provider is answered a second later: it passed the step check before
        // the other's provider call began, so before the other recorded — its own record finds the step taken.
        const late = click(2)
        openai.enqueue(late.type === "json" ? { ...late, delayMs: 1000 } : late)
        openai.enqueue(click(3))
        const both = yield* Effect.all([
          c.decision(host.token, decisionBody(host, task)),
          c.decision(host.token, decisionBody(host, task))
        ], { concurrency: 2 })
        assert.deepStrictEqual(both.map((r) => r.status).sort(), [200, 409], both.map((r) => r.text).join(" / "))
        assert.strictEqual(both.find((r) => r.status === 409)?.json.code, "step_limit")
        assert.strictEqual(both.find((r) => r.status === 200)?.json.stepIndex, 2)
        assert.strictEqual(openai.chatRequests().length, 4, "both passed the check before the provider call")
        const log = yield* c.admin.get(`/admin/planner-decisions?taskId=${task.taskId}`)
        assert.deepStrictEqual(log.json.decisions.map((d: { stepIndex: number }) => d.stepIndex), [0, 1, 2])
      }))
  })

  layer(Layer.merge(layerPlannerServer(), FakeOpenAi.FakeOpenAiServer.layer()), { excludeTestServices: true })("pages", (it) => {
    it.effect("limit and after page through the log in order; the last page has no nextAfter; a bad cursor is a 400", () =>
      Effect.gen(function*() {
        const { c, host, openai, task } = yield* ready
        for (const n of [0, 1, 2, 3, 4]) {
          openai.enqueue(click(n))
          assert.strictEqual((yield* c.decision(host.token, decisionBody(host, task))).status, 200)
        }
        const seen: Array<number> = []
        const cursors: Array<string | undefined> = []
        let after: string | undefined
        do {
          const page = yield* c.admin.get(
            `/admin/planner-decisions?taskId=${task.taskId}&limit=2${after === undefined ? "" : `&after=${after}`}`
          )
          assert.strictEqual(page.status, 200, page.text)
          assert.isAtMost(page.json.decisions.length, 2)
          seen.push(...page.json.decisions.map((d: { stepIndex: number }) => d.stepIndex))
          after = page.json.nextAfter
          cursors.push(after)
        } while (after !== undefined)
        assert.deepStrictEqual(seen, [0, 1, 2, 3, 4])
        assert.deepStrictEqual(cursors, [`${task.attempt}:1`, `${task.attempt}:3`, undefined])

        // Exactly a page's worth left: that page is the last, no empty page after it.
        const exact = yield* c.admin.get(`/admin/planner-decisions?taskId=${task.taskId}&limit=2&after=${task.attempt}:2`)
        assert.deepStrictEqual(exact.json.decisions.map((d: { stepIndex: number }) => d.stepIndex), [3, 4])
        assert.isUndefined(exact.json.nextAfter)

        for (const bad of ["after=3", "after=a:b", "limit=0", "limit=1001"]) {
          const res = yield* c.admin.get(`/admin/planner-decisions?taskId=${task.taskId}&${bad}`)
          assert.strictEqual(res.status, 400, `${bad}: ${res.text}`)
          assert.strictEqual(res.json.code, "invalid_request")
        }
      }))

    it.effect("a page ends before 16 MiB of prompts: five decisions of 4 MiB prompts come in pages of three and two", () =>
      Effect.gen(function*() {
        const { c, host, openai, task } = yield* ready
        const userPrompt = "p".repeat(maxStoredValueBytes)
        for (const n of [0, 1, 2, 3, 4]) {
          openai.enqueue(click(n))
          assert.strictEqual((yield* c.decision(host.token, decisionBody(host, task, { userPrompt }))).status, 200)
        }
        const first = yield* c.admin.get(`/admin/planner-decisions?taskId=${task.taskId}`)
        assert.strictEqual(first.status, 200, first.text.slice(0, 200))
        assert.deepStrictEqual(first.json.decisions.map((d: { stepIndex: number }) => d.stepIndex), [0, 1, 2])
        assert.strictEqual(first.json.nextAfter, `${task.attempt}:2`)
        const second = yield* c.admin.get(`/admin/planner-decisions?taskId=${task.taskId}&after=${first.json.nextAfter}`)
        assert.deepStrictEqual(second.json.decisions.map((d: { stepIndex: number }) => d.stepIndex), [3, 4])
        assert.isUndefined(second.json.nextAfter)
      }))
  })
})
