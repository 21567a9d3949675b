/**
 * A parked job on the chat's stream (docs/subagents.md): while a turn of the
 * chat is streamed, a sub-agent job that parks on a call needing approval
 * shows the call on that stream (`tool-input-available`, then
 * `tool-approval-request` naming the job's approval), and `useChat`'s own way
 * of deciding — the tool part in state `approval-responded` — decides it, as
 * the route does: the job resumes, the tool runs once, a second decision is a
 * 409. On PostgreSQL, the announcement reaches the turn on another replica than
 * the one whose runner parked the job.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import type { JobRecord, ProviderChatParams, ProviderChatResponse, UiChunk } from "@switchboard/domain"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { readUIMessageStream, uiMessageChunkSchema } from "ai"
import type { UIMessage } from "ai"
import { Deferred, Effect, Fiber, Layer } from "effect"
import * as RealSubagents from "../../../src/jobs/subagents/RealSubagents.ts"
import { startFakeMcp, textTool } from "../../support/FakeMcp.ts"
import { readEventStream, streamInit } from "../../support/EventStream.ts"
import { eventually, jobsOf } from "../../support/JobsHelpers.ts"
import { backend, makeTestDatabase } from "../../support/TestDatabase.ts"
import { baseUrl, layerReplica, layerTestServer, request, requestAt } from "../../support/TestServer.ts"
import { settings } from "../subagents/Harness.ts"

const ADMIN_TOKEN = "admin-token-for-parked-streams"
const SUBAGENT = "You refund orders."

/** A kind whose MCP tool `refund` needs the user's approval. */
const refundKind = (mcpUrl: string) => ({
  description: "Refund an order in the background, once the user allows it.",
  input: [{ key: "order", type: "integer", required: true }],
  systemPrompt: `${SUBAGENT} Order {{input.order}}.`,
  mcpServers: [{ name: "shop", url: mcpUrl, requireApproval: ["refund"] }],
  result: { type: "object", properties: { outcome: { type: "string" } }, required: ["outcome"] }
})

const put = (path: string, body: unknown) =>
  request(path, { method: "PUT", headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` }, body: JSON.stringify(body) })

/** The UIMessage a client builds from a stream's chunks (the AI SDK's own reader). */
const messageOf = (chunks: ReadonlyArray<UiChunk>) =>
  Effect.promise(async () => {
    let last: UIMessage | undefined
    const stream = new ReadableStream({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk)
        controller.close()
      }
    })
    for await (const message of readUIMessageStream({ stream: stream as never })) last = message
    return last!
  })

describe(`a parked job on the chat's stream (${backend})`, () => {
  const fake = makeFakeProvider()
  /** Completed by the test once the job parked: the turn that dispatched it streams until then. */
  let release = Deferred.makeUnsafe<void>()
  const model = (params: ProviderChatParams): Effect.Effect<ProviderChatResponse> => {
    const last = params.messages.at(-1)!
    if (params.systemPrompt?.startsWith(SUBAGENT) === true) {
      if (last.role !== "tool") return Effect.succeed({ content: "", toolCalls: [{ id: "s_1", name: "shop__refund", args: { order: 7 } }] })
      return Effect.succeed({ content: "", toolCalls: [{ id: "s_2", name: "submit_result", args: { outcome: last.toolResult?.error ?? JSON.stringify(last.toolResult?.result) } }] })
    }
    if (last.role === "tool") return Effect.as(Deferred.await(release), { content: "working on it" })
    if (last.role === "user" && last.content === "refund 7") {
      return Effect.succeed({ content: "", toolCalls: [{ id: "c_7", name: "refund-run", args: { order: 7 } }] })
    }
    return Effect.succeed({ content: "noted" })
  }
  fake.answerWith(model)

  layer(layerTestServer(fake.layer, { ADMIN_TOKEN }, { subagents: RealSubagents.layerWithMcp(settings()) }), { excludeTestServices: true })("over HTTP", (it) => {
    it.effect("the streamed turn shows the parked call; useChat's approval-responded part decides it once", () =>
      Effect.scoped(Effect.gen(function*() {
        const mcp = yield* startFakeMcp([textTool("refund", (args) => `refunded order ${String(args["order"])}`)])
        assert.strictEqual((yield* put("/admin/subagents/refund-run", refundKind(mcp.url))).status, 200)
        assert.strictEqual((yield* put("/admin/agents/shop", { systemPrompt: "Shop back office.", jobKinds: ["refund-run"] })).status, 200)
        const base = yield* baseUrl

        release = Deferred.makeUnsafe<void>()
        const user = { id: "u1", role: "user", parts: [{ type: "text", text: "refund 7" }] }
        const streaming = yield* readEventStream(`${base}/api/ui/chat`, streamInit({ id: "ps-1", agent: "shop", messages: [user] })).pipe(Effect.forkChild)
        const [parked] = yield* eventually(jobsOf("ps-1"), (jobs: ReadonlyArray<JobRecord>) => jobs[0]?.waitingFor !== undefined, "the job to park", 30_000)
        yield* Deferred.succeed(release, undefined)
        const sent = yield* Fiber.join(streaming)
        assert.strictEqual(sent.status, 200)

        const asked = sent.chunks.find((c) => c.type === "tool-approval-request") as { approvalId: string; toolCallId: string } | undefined
        assert.deepStrictEqual(asked?.approvalId, parked!.waitingFor!.approvalId)
        const call = sent.chunks.find((c) => c.type === "tool-input-available" && (c as { toolName: string }).toolName === "shop__refund")
        assert.deepInclude(call as object, { toolCallId: asked!.toolCallId, input: { order: 7 } })
        for (const chunk of sent.chunks) {
          const checked = yield* Effect.promise(() => Promise.resolve(uiMessageChunkSchema().validate!(chunk)))
          assert.isTrue(checked.success, JSON.stringify(chunk))
        }

        // What `addToolApprovalResponse({ id, approved: true })` leaves in the message, sent as useChat sends it.
        const message = yield* messageOf(sent.chunks)
        const part = message.parts.find((p) => p.type === "tool-shop__refund") as { state: string } | undefined
        assert.strictEqual(part?.state, "approval-requested")
        const responded = {
          ...message,
          parts: message.parts.map((p) => p === part ? { ...p, state: "approval-responded", approval: { id: asked!.approvalId, approved: true } } : p)
        }
        const body = { id: "ps-1", agent: "shop", messages: [user, responded] }
        const decided = yield* readEventStream(`${base}/api/ui/chat`, streamInit(body))
        assert.strictEqual(decided.status, 200, JSON.stringify(decided.json))
        assert.deepStrictEqual(decided.chunks.map((c) => c.type), ["start", "finish"])

        const [done] = yield* eventually(jobsOf("ps-1"), (jobs: ReadonlyArray<JobRecord>) => jobs[0]?.status === "done", "the job to finish", 30_000)
        assert.deepStrictEqual(done!.result, { outcome: "\"refunded order 7\"" })
        assert.strictEqual(mcp.calls.filter((c) => c.name === "refund").length, 1)
        const again = yield* readEventStream(`${base}/api/ui/chat`, streamInit(body))
        assert.deepStrictEqual([again.status, again.json?.code], [409, "approval_decided"])
        assert.strictEqual(mcp.calls.filter((c) => c.name === "refund").length, 1)
      })), { timeout: 60_000 })
  })
})

describe(`a parked job announced across replicas (${backend})`, () => {
  // The embedded database is one process: its replicas in one test share one, and there is nothing to cross.
  it.live.skipIf(backend !== "postgres")("the turn streams on A; B's runner parks the job; A's stream shows the call", () =>
    Effect.gen(function*() {
      const db = yield* makeTestDatabase
      const fake = makeFakeProvider()
      let release = Deferred.makeUnsafe<void>()
      fake.answerWith((params) => {
        const last = params.messages.at(-1)!
        if (params.systemPrompt?.startsWith(SUBAGENT) === true) {
          return Effect.succeed({ content: "", toolCalls: [{ id: "s_1", name: "shop__refund", args: { order: 8 } }] })
        }
        if (last.role === "tool") return Effect.as(Deferred.await(release), { content: "working on it" })
        return Effect.succeed({ content: "", toolCalls: [{ id: "c_8", name: "refund-run", args: { order: 8 } }] })
      })
      const mcp = yield* startFakeMcp([textTool("refund", () => "refunded")])
      const memoMap = yield* Layer.makeMemoMap
      const scope = yield* Effect.scope
      // A runs no job (no room for one): B's runner takes it, and parks it.
      const replica = (concurrency: number) =>
        Layer.buildWithMemoMap(
          Layer.fresh(layerReplica(fake.layer, db.client(), { subagents: RealSubagents.layerWithMcp(settings()), jobs: { concurrency } }, { ADMIN_TOKEN })),
          memoMap,
          scope
        ).pipe(Effect.flatMap((services) => baseUrl.pipe(Effect.provide(services))))
      const a = yield* replica(0)
      yield* replica(4)
      const putAt = (path: string, body: unknown) =>
        requestAt(a, path, { method: "PUT", headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` }, body: JSON.stringify(body) })
      assert.strictEqual((yield* putAt("/admin/subagents/refund-run", refundKind(mcp.url))).status, 200)
      assert.strictEqual((yield* putAt("/admin/agents/shop", { systemPrompt: "Shop back office.", jobKinds: ["refund-run"] })).status, 200)

      release = Deferred.makeUnsafe<void>()
      const user = { id: "u1", role: "user", parts: [{ type: "text", text: "refund 8" }] }
      // Read until the call is asked for (an announcement that never comes fails by the test's timeout), then let the turn end.
      const sent = yield* readEventStream(`${a}/api/ui/chat`, streamInit({ id: "ps-2", agent: "shop", messages: [user] }), (c) => c.type === "tool-approval-request")
      yield* Deferred.succeed(release, undefined)
      const jobs = requestAt(a, "/api/jobs?chatId=ps-2").pipe(Effect.map((r) => r.json.jobs as ReadonlyArray<JobRecord>))
      const [parked] = yield* eventually(jobs, (list) => list[0]?.waitingFor !== undefined, "the job to park", 30_000)
      const asked = sent.chunks.find((c) => c.type === "tool-approval-request") as { approvalId: string } | undefined
      assert.strictEqual(asked?.approvalId, parked!.waitingFor!.approvalId)
    }), { timeout: 60_000 })
})
