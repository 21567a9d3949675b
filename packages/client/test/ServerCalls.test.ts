/**
 * The orchestrator and the calls the server runs itself (docs/tools.md), against a local fake of
 * the server: an MCP call shown in the streaming answer and as the active tool while it runs, the
 * history re-synced from the transcript once the turn ends; an answer that stops at a call
 * waiting for approval (`pendingApprovals`, the call kept with its message, never run here), and
 * `decide` — the decision sent, the continuation followed, the history re-synced.
 */
import type { ChatMessage, UiChunk } from "@switchboard/domain"
import { SSE_DONE, SSE_KEEP_ALIVE, sseEvent } from "@switchboard/domain"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { ChatTransport } from "../src/chat/ChatTransport.ts"
import { makeOrchestrator } from "../src/chat/Orchestrator.ts"
import { decideApproval, pendingApprovalsIn, run } from "../src/chat/Run.ts"
import { ToolRegistry } from "../src/tools/ToolRegistry.ts"
import { fakeTool, makeStores } from "./support/Fakes.ts"
import { startFakeServer } from "./support/FakeServer.ts"
import { gate } from "./support/FakeStream.ts"

const at = 1_700_000_000_000
const text = (id: string, delta: string): ReadonlyArray<UiChunk> => [
  { type: "text-start", id },
  { type: "text-delta", id, delta },
  { type: "text-end", id }
]

describe("the orchestrator and server-run calls", () => {
  it.effect("an MCP call is the active tool while it runs; the turn's end re-syncs the transcript", () =>
    Effect.gen(function*() {
      const held = gate()
      const transcript: Array<ChatMessage> = []
      const server = yield* startFakeServer(async (request) => {
        if (request.method === "GET" && request.path.endsWith("/messages")) return { json: { messages: transcript } }
        async function* events() {
          yield SSE_KEEP_ALIVE
          for (const chunk of [{ type: "start", messageId: "srv_1" }, { type: "start-step" }, ...text("t1", "Let me look.")] as const) yield sseEvent(chunk)
          yield sseEvent({ type: "tool-input-available", toolCallId: "c1", toolName: "shop__lookup", input: { order: 7 } })
          await held.opened
          yield sseEvent({ type: "tool-output-available", toolCallId: "c1", output: "order 7 is paid" })
          for (const chunk of [{ type: "finish-step" }, { type: "start-step" }, ...text("t2", "Found it."), { type: "finish-step" }] as const) yield sseEvent(chunk)
          yield sseEvent({ type: "finish", finishReason: "stop" })
          yield SSE_DONE
        }
        return { events: events() }
      })
      const stores = makeStores()
      stores.chatStore.getState().addMessage({ id: "u1", role: "user", content: "look up order 7" })
      transcript.push(
        { id: "u1", role: "user", content: "look up order 7", timestamp: at },
        { id: "srv_1", role: "assistant", content: "Let me look.", toolCalls: [{ id: "c1", name: "shop__lookup", args: { order: 7 } }], timestamp: at },
        { id: "r1", role: "tool", content: "order 7 is paid", toolResult: { toolCallId: "c1", name: "shop__lookup", result: "order 7 is paid" }, timestamp: at },
        { id: "srv_2", role: "assistant", content: "Found it.", timestamp: at }
      )
      const seen: Array<string | null> = []
      stores.agentStore.subscribe((state) => void seen.push(state.activeTool))
      const orchestrator = makeOrchestrator({ ...stores, registry: new ToolRegistry() })
      const fiber = yield* Effect.forkChild(orchestrator.run().pipe(Effect.provide(ChatTransport.layer({ baseUrl: server.url }))))
      yield* Effect.promise(async () => {
        while (stores.agentStore.getState().activeTool !== "shop__lookup") await new Promise((done) => setTimeout(done, 5))
      })
      // The call in the answer that streams in, running.
      const draft = stores.chatStore.getState().messages.at(-1)!
      assert.deepStrictEqual(draft.toolCalls?.map((c) => c.name), ["shop__lookup"])
      assert.strictEqual(stores.agentStore.getState().status, "processing")
      held.open()
      const result = yield* Fiber.join(fiber)
      assert.strictEqual(result._tag, "Answered")
      assert.strictEqual(result.message.content, "Found it.")
      assert.deepStrictEqual(stores.chatStore.getState().messages.map((m) => m.id), ["u1", "srv_1", "r1", "srv_2"])
      assert.include(seen, null, "the active tool was cleared once its output came")
    }))

  it.effect("a call waiting for approval: kept with its message, never run here; decide sends it and re-syncs", () =>
    Effect.gen(function*() {
      const transcript: Array<ChatMessage> = []
      const decisions: Array<unknown> = []
      const asking: ChatMessage = {
        id: "srv_1",
        role: "assistant",
        content: "",
        toolCalls: [{ id: "c1", name: "shop__refund", args: { order: 4 } }],
        metadata: { approvals: { apr_1: "c1" } },
        timestamp: at
      }
      const server = yield* startFakeServer((request) => {
        if (request.path === "/api/agent/chat") {
          return {
            json: {
              content: "",
              messageId: "srv_1",
              pendingApprovals: [{ approvalId: "apr_1", toolCallId: "c1", toolName: "shop__refund", input: { order: 4 } }]
            }
          }
        }
        if (request.path.endsWith("/approvals/apr_1")) {
          decisions.push(JSON.parse(request.body.toString("utf8")))
          // The continuation runs (and ends) on the server before the client looks.
          transcript.push(
            { id: "approval_apr_1", role: "tool", content: "refunded", toolResult: { toolCallId: "c1", name: "shop__refund", result: "refunded" }, metadata: { approval: { id: "apr_1", approved: true } }, timestamp: at },
            { id: "srv_2", role: "assistant", content: "Refunded.", timestamp: at }
          )
          return { status: 202, json: { accepted: true } }
        }
        if (request.path.endsWith("/stream")) return { status: 204 }
        if (request.path.endsWith("/messages")) return { json: { messages: transcript } }
        return { status: 404, json: { error: "not found", code: "not_found" } }
      })
      const stores = makeStores()
      stores.chatStore.getState().addMessage({ id: "u1", role: "user", content: "refund order 4" })
      transcript.push({ id: "u1", role: "user", content: "refund order 4", timestamp: at }, asking)
      // A client tool of the same name, to see that it is never run for the server's call.
      const refund = fakeTool("shop__refund", [])
      const registry = new ToolRegistry().register(refund.tool)
      const orchestrator = makeOrchestrator({ ...stores, registry, streaming: false })
      const layer = ChatTransport.layer({ baseUrl: server.url })
      const first = yield* orchestrator.run().pipe(Effect.provide(layer))
      assert.strictEqual(first._tag, "Answered")
      assert.deepStrictEqual(first._tag === "Answered" ? first.pendingApprovals?.map((p) => p.approvalId) : [], ["apr_1"])
      const kept = stores.chatStore.getState().messages.at(-1)!
      assert.deepStrictEqual([kept.id, kept.toolCalls?.[0]?.name, kept.metadata?.["approvals"]], ["srv_1", "shop__refund", { apr_1: "c1" }])
      assert.strictEqual(refund.calls.length, 0)

      const decided = yield* orchestrator.decide("apr_1", true).pipe(Effect.provide(layer))
      assert.deepStrictEqual(decisions, [{ approved: true }])
      assert.strictEqual(decided.message.content, "Refunded.")
      assert.isUndefined(decided._tag === "Answered" ? decided.pendingApprovals : undefined)
      assert.deepStrictEqual(stores.chatStore.getState().messages.map((m) => m.id), ["u1", "srv_1", "approval_apr_1", "srv_2"])
      assert.strictEqual(refund.calls.length, 0)
    }))
})

describe("the promise API and approvals", () => {
  it.effect("run() resolves with the asking message; decideApproval() with the call's answer and the model's", () =>
    Effect.gen(function*() {
      const transcript: Array<ChatMessage> = []
      const server = yield* startFakeServer((request) => {
        if (request.path === "/api/agent/chat") {
          transcript.push(
            { id: "u1", role: "user", content: "refund order 9", timestamp: at },
            { id: "srv_1", role: "assistant", content: "", toolCalls: [{ id: "c1", name: "shop__refund", args: { order: 9 } }], metadata: { approvals: { apr_9: "c1" } }, timestamp: at }
          )
          return { json: { content: "", messageId: "srv_1", pendingApprovals: [{ approvalId: "apr_9", toolCallId: "c1", toolName: "shop__refund", input: { order: 9 } }] } }
        }
        if (request.path.endsWith("/approvals/apr_9")) {
          transcript.push(
            { id: "approval_apr_9", role: "tool", content: "denied by the user: no", toolResult: { toolCallId: "c1", name: "shop__refund", error: "denied by the user: no" }, metadata: { approval: { id: "apr_9", approved: false, reason: "no" } }, timestamp: at },
            { id: "srv_2", role: "assistant", content: "Not refunded.", timestamp: at }
          )
          return { status: 202, json: { accepted: true } }
        }
        if (request.path.endsWith("/stream")) return { status: 204 }
        return { json: { messages: transcript } }
      })
      const asked = yield* Effect.promise(() => run([{ role: "user", content: "refund order 9" }], null, { serverUrl: server.url, chatId: "p-1", streaming: false }))
      assert.deepStrictEqual(pendingApprovalsIn(asked).map((p) => p.approvalId), ["apr_9"])
      const decided = yield* Effect.promise(() => decideApproval({ approvalId: "apr_9", approved: false, reason: "no" }, { serverUrl: server.url, chatId: "p-1" }))
      assert.deepStrictEqual(decided.map((m) => m.id), ["approval_apr_9", "srv_2"])
      assert.strictEqual(decided.at(-1)!.content, "Not refunded.")
    }))
})
