/**
 * Hosts' budgets of planner tokens (docs/usage.md) over HTTP: a decision of a
 * host whose tokens over the last 24 hours reached its budget is a 429
 * `budget_exceeded` with `Retry-After`, before any provider call, recording
 * nothing; the operator sets, reads and clears a host's own budget; the
 * default comes from `PLANNER_HOST_DAILY_TOKENS`. Each decision of the fake
 * provider uses 3 input and 2 output tokens.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { FakeOpenAi } from "@switchboard/providers/testing"
import { ADMIN_TOKEN, client, decisionBody, layerPlannerServer, plannerEnv } from "../support/ControlPlane.ts"
import type { Client } from "../support/ControlPlane.ts"
import { baseUrl, requestAt } from "../support/TestServer.ts"

const ready = Effect.gen(function*() {
  const c = client(yield* baseUrl)
  const openai = yield* FakeOpenAi.FakeOpenAiServer
  openai.reset()
  openai.respondWith(() =>
    FakeOpenAi.reply.completion(
      { toolCalls: [{ name: "click", arguments: "{\"x\":1,\"y\":2}" }] },
      { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 }
    )
  )
  const { host, profileId, task } = yield* c.readyHost(openai.url, { model: "gpt-budget", host: "budgeted" })
  return { c, openai, host, task, profileId }
})

const putBudget = (c: Client, hostId: string, body: unknown) =>
  requestAt(c.base, `/admin/hosts/${hostId}/budget`, {
    method: "PUT",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })

const decisionsOf = (c: Client, taskId: string) =>
  Effect.map(c.admin.get(`/admin/planner-decisions?taskId=${taskId}`), (r) => r.json.decisions as Array<unknown>)

const fakes = FakeOpenAi.FakeOpenAiServer.layer()

describe("host budgets", () => {
  layer(Layer.mergeAll(layerPlannerServer(), fakes), { excludeTestServices: true })("without a default", (it) => {
    it.effect("a host at its budget is refused with 429 and Retry-After, before any provider call", () =>
      Effect.gen(function*() {
        const { c, host, openai, task } = yield* ready
        const set = yield* putBudget(c, host.hostId, { dailyTokens: 12 })
        assert.strictEqual(set.status, 200, set.text)
        assert.deepStrictEqual(set.json, {
          hostId: host.hostId,
          dailyTokens: 12,
          defaultDailyTokens: null,
          effectiveDailyTokens: 12,
          usedTokens: 0
        })
        // 0, 5 and 10 tokens used are under 12; 15 is not.
        for (let step = 0; step < 3; step++) {
          const res = yield* c.decision(host.token, decisionBody(host, task))
          assert.strictEqual(res.status, 200, res.text)
        }
        const refused = yield* c.decision(host.token, decisionBody(host, task))
        assert.strictEqual(refused.status, 429, refused.text)
        assert.strictEqual(refused.json.code, "budget_exceeded")
        assert.strictEqual(refused.json.limit, 12)
        assert.strictEqual(refused.json.used, 15)
        assert.include(refused.json.error, host.hostId)
        const retryAfter = refused.json.retryAfter as number
        // The oldest counted hour is this one: it leaves the window within 25 hours.
        assert.isAbove(retryAfter, 24 * 3600 - 1)
        assert.isAtMost(retryAfter, 25 * 3600)
        assert.strictEqual(refused.headers.get("retry-after"), String(retryAfter))
        assert.strictEqual(openai.chatRequests().length, 3, "no provider call for the refused decision")
        assert.strictEqual((yield* decisionsOf(c, task.taskId)).length, 3, "nothing recorded for it")

        const view = yield* c.admin.get(`/admin/hosts/${host.hostId}/budget`)
        assert.strictEqual(view.status, 200)
        assert.strictEqual(view.json.usedTokens, 15)

        // Raised, the host goes on; cleared (null), no budget applies.
        assert.strictEqual((yield* putBudget(c, host.hostId, { dailyTokens: 100 })).status, 200)
        assert.strictEqual((yield* c.decision(host.token, decisionBody(host, task))).status, 200)
        const cleared = yield* putBudget(c, host.hostId, { dailyTokens: null })
        assert.deepStrictEqual(cleared.json, {
          hostId: host.hostId,
          dailyTokens: null,
          defaultDailyTokens: null,
          effectiveDailyTokens: null,
          usedTokens: 20
        })
        assert.strictEqual((yield* c.decision(host.token, decisionBody(host, task))).status, 200)
      }))

    it.effect("a budget of 0 refuses the first decision; another host is not affected", () =>
      Effect.gen(function*() {
        const { c, host, openai, task } = yield* ready
        assert.strictEqual((yield* putBudget(c, host.hostId, { dailyTokens: 0 })).status, 200)
        const refused = yield* c.decision(host.token, decisionBody(host, task))
        assert.strictEqual(refused.status, 429)
        assert.deepInclude(refused.json, { code: "budget_exceeded", limit: 0, used: 0 })
        assert.strictEqual(openai.chatRequests().length, 0)

        const other = yield* c.addHost("unbudgeted")
        yield* c.addTask("another goal", other.hostId)
        const otherTask = yield* c.claim(other)
        assert.strictEqual((yield* c.decision(other.token, decisionBody(other, otherTask))).status, 200)
      }))

    it.effect("the planner's calls are in /admin/usage by host, task, model and kind", () =>
      Effect.gen(function*() {
        const { c, host, profileId, task } = yield* ready
        for (let step = 0; step < 2; step++) {
          assert.strictEqual((yield* c.decision(host.token, decisionBody(host, task))).status, 200)
        }
        const byHost = yield* c.admin.get(`/admin/usage?groupBy=host&hostId=${host.hostId}`)
        assert.strictEqual(byHost.status, 200, byHost.text)
        assert.deepStrictEqual(byHost.json.rows, [{ key: host.hostId, calls: 2, inputTokens: 6, outputTokens: 4, cachedInputTokens: 0 }])
        const byTask = yield* c.admin.get(`/admin/usage?groupBy=task&taskId=${task.taskId}`)
        assert.deepStrictEqual(byTask.json.rows.map((r: { key: string; calls: number }) => [r.key, r.calls]), [[task.taskId, 2]])
        const byModel = yield* c.admin.get(`/admin/usage?groupBy=model&hostId=${host.hostId}`)
        assert.deepStrictEqual(byModel.json.rows.map((r: { key: string }) => r.key), ["gpt-budget"])
        const byKind = yield* c.admin.get(`/admin/usage?hostId=${host.hostId}`)
        assert.deepStrictEqual(byKind.json.rows.map((r: { key: string }) => r.key), ["planner"])
        assert.strictEqual(byKind.json.groupBy, "kind")
        // The profile that served them is kept with them.
        const sql = yield* SqlClient.SqlClient
        const stored = yield* sql<{ profile_id: string }>`SELECT DISTINCT profile_id FROM usage_hourly WHERE host_id = ${host.hostId}`
        assert.deepStrictEqual(stored.map((r) => r.profile_id), [profileId])
      }))

    it.effect("bad budgets are 400, an unknown host 404, no admin token 401", () =>
      Effect.gen(function*() {
        const { c, host } = yield* ready
        for (const body of [{ dailyTokens: -1 }, { dailyTokens: 1.5 }, { dailyTokens: "100" }, {}]) {
          const res = yield* putBudget(c, host.hostId, body)
          assert.strictEqual(res.status, 400, JSON.stringify(body))
          assert.strictEqual(res.json.code, "invalid_request")
        }
        const unknown = yield* putBudget(c, "no-such-host", { dailyTokens: 5 })
        assert.strictEqual(unknown.status, 404)
        assert.strictEqual(unknown.json.code, "host_not_found")
        assert.strictEqual((yield* c.admin.get("/admin/hosts/no-such-host/budget")).json.code, "host_not_found")
        const anonymous = yield* requestAt(c.base, `/admin/hosts/${host.hostId}/budget`)
        assert.strictEqual(anonymous.status, 401)
      }))
  })

  layer(
    Layer.mergeAll(layerPlannerServer(plannerEnv({ PLANNER_HOST_DAILY_TOKENS: " 0 " })), fakes),
    { excludeTestServices: true }
  )("with PLANNER_HOST_DAILY_TOKENS", (it) => {
    it.effect("the default applies to every host without a budget of its own", () =>
      Effect.gen(function*() {
        const { c, host, openai, task } = yield* ready
        const refused = yield* c.decision(host.token, decisionBody(host, task))
        assert.strictEqual(refused.status, 429, refused.text)
        assert.deepInclude(refused.json, { code: "budget_exceeded", limit: 0 })
        assert.strictEqual(openai.chatRequests().length, 0)
        const own = yield* putBudget(c, host.hostId, { dailyTokens: 1000 })
        assert.deepInclude(own.json, { dailyTokens: 1000, defaultDailyTokens: 0, effectiveDailyTokens: 1000 })
        assert.strictEqual((yield* c.decision(host.token, decisionBody(host, task))).status, 200)
      }))
  })
})
