/**
 * Approvals inside a job (docs/subagents.md): a defined kind's MCP call that
 * needs approval parks the job — still running, `waitingFor` and its activity
 * say what it waits on, no lease held — and the chat's approval route decides
 * it on any replica; the job resumes on whichever replica claims it and
 * finishes once. A replica gone while the job is parked changes nothing; a
 * second decision is a 409; one past `APPROVAL_TIMEOUT` finds the call denied.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ChatMessage, JobRecord, ProviderChatParams, ProviderChatResponse } from "@switchboard/domain"
import { subagentResultOf } from "@switchboard/domain"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { Effect, Exit, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql"
import * as RealSubagents from "../../../src/jobs/subagents/RealSubagents.ts"
import { startFakeMcp, textTool } from "../../support/FakeMcp.ts"
import { eventually, user } from "../../support/JobsHelpers.ts"
import { backend, makeTestDatabase } from "../../support/TestDatabase.ts"
import { baseUrl, layerReplica, postJsonAt, requestAt } from "../../support/TestServer.ts"
import { settings } from "../subagents/Harness.ts"

const ADMIN_TOKEN = "admin-token-for-parked-jobs"
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }
const SUBAGENT = "You refund orders."

const put = (base: string, path: string, body: unknown) =>
  requestAt(base, path, { method: "PUT", headers: { "content-type": "application/json", ...admin }, body: JSON.stringify(body) })

const decide = (base: string, chatId: string, approvalId: string, body: unknown) =>
  requestAt(base, `/api/chats/${chatId}/approvals/${approvalId}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })

const jobsAt = (base: string, chatId: string) =>
  requestAt(base, `/api/jobs?chatId=${chatId}`).pipe(Effect.map((r) => r.json.jobs as ReadonlyArray<JobRecord>))

const parkedAt = (base: string, chatId: string) =>
  eventually(jobsAt(base, chatId), (jobs) => jobs[0]?.waitingFor !== undefined, `a parked job in ${chatId}`, 30_000).pipe(
    Effect.map((jobs) => jobs[0]!)
  )

const finishedAt = (base: string, chatId: string) =>
  eventually(jobsAt(base, chatId), (jobs) => jobs[0] !== undefined && jobs[0].status !== "running", `the job of ${chatId} to finish`, 30_000).pipe(
    Effect.map((jobs) => jobs[0]!)
  )

const transcriptAt = (base: string, chatId: string) =>
  requestAt(base, `/api/chats/${chatId}/messages`).pipe(Effect.map((r) => r.json.messages as ReadonlyArray<ChatMessage>))

/**
 * The chat model: "refund N" dispatches refund-run. The sub-agent: calls shop__refund for the
 * order of its input, then submits what the call answered (its error: why it did not run).
 */
const model = (params: ProviderChatParams): ProviderChatResponse => {
  const last = params.messages.at(-1)!
  if (params.systemPrompt?.startsWith(SUBAGENT) === true) {
    const order = Number(/Order (\d+)/.exec(params.systemPrompt)?.[1])
    if (last.role !== "tool") return { content: "", toolCalls: [{ id: `s_${order}`, name: "shop__refund", args: { order } }] }
    const answer = last.toolResult?.error ?? JSON.stringify(last.toolResult?.result)
    return { content: "", toolCalls: [{ id: `s_${order}_done`, name: "submit_result", args: { outcome: answer } }] }
  }
  if (last.role === "tool") return { content: "working on it" }
  if (last.role === "user" && subagentResultOf(last) !== undefined) return { content: "reported" }
  const match = /^refund (\d+)$/.exec(last.content)
  return match === null
    ? { content: `you said: ${last.content}` }
    : { content: "", toolCalls: [{ id: `c_${match[1]}`, name: "refund-run", args: { order: Number(match[1]) } }] }
}

describe(`approvals inside a job (${backend})`, () => {
  it.live("parked without a lease; decided on the other replica after the first is gone; denied; a second decision 409; two racing; timed out", () =>
    Effect.gen(function*() {
      const db = yield* makeTestDatabase
      const fake = makeFakeProvider()
      fake.answerWith((params) => Effect.succeed(model(params)))
      const mcp = yield* startFakeMcp([textTool("refund", (args) => `refunded order ${String(args["order"])}`)])
      const refunds = () => mcp.calls.filter((c) => c.name === "refund").length
      const memoMap = yield* Layer.makeMemoMap
      const replica = (scope: Scope.Scope, approvalTimeoutMs?: number) =>
        Layer.buildWithMemoMap(
          Layer.fresh(layerReplica(
            fake.layer,
            db.client(),
            { subagents: RealSubagents.layerWithMcp(settings()), jobs: approvalTimeoutMs === undefined ? {} : { approvalTimeoutMs } },
            { ADMIN_TOKEN }
          )),
          memoMap,
          scope
        ).pipe(Effect.flatMap((services) => baseUrl.pipe(Effect.provide(services))))
      const [scopeA, scopeB, scopeC] = [yield* Scope.make(), yield* Scope.make(), yield* Scope.make()]
      const a = yield* replica(scopeA)
      const b = yield* replica(scopeB)

      const kind = {
        description: "Refund an order in the background, once the user allows it.",
        input: [{ key: "order", type: "integer", required: true }],
        systemPrompt: `${SUBAGENT} Order {{input.order}}.`,
        mcpServers: [{ name: "shop", url: mcp.url, requireApproval: ["refund"] }],
        result: { type: "object", properties: { outcome: { type: "string" } }, required: ["outcome"] }
      }
      assert.strictEqual((yield* put(a, "/admin/subagents/refund-run", kind)).status, 200)
      assert.strictEqual((yield* put(a, "/admin/agents/shop", { systemPrompt: "Shop back office.", jobKinds: ["refund-run"] })).status, 200)
      const turn = (base: string, chatId: string, text: string) =>
        postJsonAt(base, "/api/agent/chat", { agent: "shop", chatId, messages: [user(`u_${chatId}`, text)] })

      // Parked on A: running, waiting for the call, no lease, the tool not run.
      assert.strictEqual((yield* turn(a, "p-1", "refund 1")).status, 200)
      const parked = yield* parkedAt(a, "p-1")
      assert.strictEqual(parked.status, "running")
      assert.strictEqual(parked.activity, "waiting for approval: shop__refund")
      assert.deepInclude(parked.waitingFor!, { toolName: "shop__refund", input: { order: 1 } })
      assert.match(parked.waitingFor!.approvalId, /^apr_[0-9a-f]{32}$/)
      const lease = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ lease_owner: string | null }>`SELECT lease_owner FROM jobs WHERE id = ${parked.id}`
      }).pipe(Effect.provide(db.client()))
      assert.isNull(lease[0]!.lease_owner)
      assert.strictEqual(refunds(), 0)

      // A is gone; B takes the decision, resumes the job and finishes it once.
      yield* Scope.close(scopeA, Exit.void)
      const approved = yield* decide(b, "p-1", parked.waitingFor!.approvalId, { approved: true })
      assert.strictEqual(approved.status, 202, approved.text)
      const again = yield* decide(b, "p-1", parked.waitingFor!.approvalId, { approved: false })
      assert.strictEqual(again.status, 409)
      assert.strictEqual(again.json.code, "approval_decided")
      const done = yield* finishedAt(b, "p-1")
      assert.strictEqual(done.status, "done")
      assert.deepStrictEqual(done.result, { outcome: "\"refunded order 1\"" })
      assert.isUndefined(done.waitingFor)
      assert.strictEqual(refunds(), 1)
      const steers = (yield* eventually(transcriptAt(b, "p-1"), (m) => m.at(-1)?.content === "reported", "the wake turn"))
        .filter((m) => subagentResultOf(m) !== undefined)
      assert.strictEqual(steers.length, 1)
      assert.strictEqual((yield* decide(b, "p-1", "apr_00000000000000000000000000000000", { approved: true })).status, 404)

      // Denied with a reason: the sub-agent reads it and goes on without the tool.
      assert.strictEqual((yield* turn(b, "p-2", "refund 2")).status, 200)
      const second = yield* parkedAt(b, "p-2")
      assert.strictEqual((yield* decide(b, "p-2", second.waitingFor!.approvalId, { approved: false, reason: "too large" })).status, 202)
      const denied = yield* finishedAt(b, "p-2")
      assert.deepStrictEqual(denied.result, { outcome: "denied by the user: too large" })
      assert.strictEqual(refunds(), 1)

      // Two decisions racing on two replicas: one is taken, the tool runs once.
      const c = yield* replica(scopeC)
      assert.strictEqual((yield* turn(b, "p-4", "refund 4")).status, 200)
      const fourth = yield* parkedAt(b, "p-4")
      const answers = yield* Effect.all([
        decide(b, "p-4", fourth.waitingFor!.approvalId, { approved: true }),
        decide(c, "p-4", fourth.waitingFor!.approvalId, { approved: true })
      ], { concurrency: 2 })
      assert.deepStrictEqual(answers.map((r) => r.status).sort(), [202, 409])
      assert.deepStrictEqual((yield* finishedAt(c, "p-4")).result, { outcome: "\"refunded order 4\"" })
      assert.strictEqual(refunds(), 2)

      // Undecided past APPROVAL_TIMEOUT: denied; a decision after that is refused. The other replicas
      // are stopped first: the replica that parks a job sets its deadline, and this one's is short.
      yield* Scope.close(scopeB, Exit.void)
      yield* Scope.close(scopeC, Exit.void)
      const d = yield* replica(yield* Effect.scope, 300)
      assert.strictEqual((yield* turn(d, "p-3", "refund 3")).status, 200)
      const third = yield* eventually(jobsAt(d, "p-3"), (jobs) => jobs[0] !== undefined && jobs[0].status !== "running", "the timed-out job", 30_000)
      assert.match(String((third[0]!.result as { outcome?: string }).outcome), /^denied by the user: no decision within APPROVAL_TIMEOUT/)
      const waited = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ approval_id: string; approved: boolean }>`SELECT approval_id, approved FROM approval_decisions WHERE chat_id = 'p-3'`
      }).pipe(Effect.provide(db.client()))
      assert.deepStrictEqual(waited.map((r) => r.approved), [false])
      assert.strictEqual((yield* decide(d, "p-3", waited[0]!.approval_id, { approved: true })).status, 409)
      assert.strictEqual(refunds(), 2)
    }), { timeout: 120_000 })

  it.live("a sub-agent whose conversation outgrew what a job keeps cannot wait for an approval: the job fails saying so, the call not run", () =>
    Effect.gen(function*() {
      const db = yield* makeTestDatabase
      const fake = makeFakeProvider()
      // The sub-agent writes 3 MiB, looks an order up, writes 2 MiB more and then asks to refund it.
      const bulky = (n: number) => "b".repeat(n * 1024 * 1024)
      fake.answerWith((params) => {
        const last = params.messages.at(-1)!
        if (params.systemPrompt?.startsWith(SUBAGENT) !== true) return Effect.succeed(model(params))
        if (last.role !== "tool") return Effect.succeed({ content: bulky(3), toolCalls: [{ id: "s_look", name: "shop__lookup", args: { order: 9 } }] })
        return Effect.succeed({ content: bulky(2), toolCalls: [{ id: "s_refund", name: "shop__refund", args: { order: 9 } }] })
      })
      const mcp = yield* startFakeMcp([
        textTool("lookup", () => "order 9: 12 EUR"),
        textTool("refund", (args) => `refunded order ${String(args["order"])}`)
      ])
      const base = yield* Layer.build(layerReplica(fake.layer, db.client(), { subagents: RealSubagents.layerWithMcp(settings()) }, { ADMIN_TOKEN })).pipe(
        Effect.flatMap((services) => baseUrl.pipe(Effect.provide(services)))
      )
      assert.strictEqual((yield* put(base, "/admin/subagents/refund-run", {
        description: "Refund an order in the background, once the user allows it.",
        input: [{ key: "order", type: "integer", required: true }],
        systemPrompt: `${SUBAGENT} Order {{input.order}}.`,
        mcpServers: [{ name: "shop", url: mcp.url, requireApproval: ["refund"] }],
        result: { type: "object", properties: { outcome: { type: "string" } }, required: ["outcome"] }
      })).status, 200)
      assert.strictEqual((yield* put(base, "/admin/agents/shop", { systemPrompt: "Shop back office.", jobKinds: ["refund-run"] })).status, 200)
      assert.strictEqual((yield* postJsonAt(base, "/api/agent/chat", { agent: "shop", chatId: "p-big", messages: [user("u_big", "refund 9")] })).status, 200)

      const job = yield* finishedAt(base, "p-big")
      assert.strictEqual(job.status, "error")
      assert.match(String(job.error), /its conversation is \d+ bytes of JSON, over the \d+ a job keeps while it waits for an approval of shop__refund/)
      assert.isUndefined(job.waitingFor)
      assert.deepStrictEqual(mcp.calls.map((c) => c.name), ["lookup"])
    }), { timeout: 120_000 })
})

