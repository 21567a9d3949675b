/**
 * Approvals (docs/tools.md): a call of an MCP tool that needs approval stops
 * the turn pending; the decision — by the route or by `useChat`'s
 * `addToolApprovalResponse` — continues the chat as a turn of its own, the
 * tool run at most once per approval whatever races: a second decision, the
 * other replica of two, two decisions at once, a replica gone between the
 * decision and the tool's end.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import type { ChatMessage } from "@switchboard/domain"
import { AbstractChat, DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses, uiMessageChunkSchema } from "ai"
import type { ChatState, ChatStatus, UIMessage } from "ai"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { readEventStream, streamedText, streamInit } from "../support/EventStream.ts"
import { callingModel, startFakeMcp, textTool } from "../support/FakeMcp.ts"
import { eventually, user } from "../support/JobsHelpers.ts"
import { backend, makeTestDatabase } from "../support/TestDatabase.ts"
import { baseUrl, layerReplica, layerTestServer, postJsonAt, request, requestAt } from "../support/TestServer.ts"

const ADMIN_TOKEN = "admin-token-for-approvals"
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }

const model = callingModel

const refundTool = textTool("refund", (args) => `refunded order ${String(args["order"])}`)
const lookupTool = textTool("lookup", (args) => `order ${String(args["order"])} is paid`)

const putShop = (base: string, url: string) =>
  requestAt(base, "/admin/agents/shop", {
    method: "PUT",
    headers: { "content-type": "application/json", ...admin },
    body: JSON.stringify({ systemPrompt: "A shop's support agent", mcpServers: [{ name: "shop", url, requireApproval: ["refund"] }] })
  })

const turn = (base: string, chatId: string, text: string, id = `u_${chatId}_${text.length}`) =>
  postJsonAt(base, "/api/agent/chat", { agent: "shop", chatId, messages: [user(id, text)] })

const decide = (base: string, chatId: string, approvalId: string, body: unknown, headers: Record<string, string> = {}) =>
  requestAt(base, `/api/chats/${chatId}/approvals/${approvalId}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body)
  })

const transcriptAt = (base: string, chatId: string) =>
  requestAt(base, `/api/chats/${chatId}/messages`).pipe(Effect.map((res) => res.json.messages as ReadonlyArray<ChatMessage>))

/** The chat's transcript once its last message is an assistant's answer after `count` messages or more. */
const settledAt = (base: string, chatId: string, count: number) =>
  eventually(transcriptAt(base, chatId), (m) => m.length >= count && m.at(-1)?.role === "assistant", `chat ${chatId} to be answered`)

/** `useChat`'s state, in memory: what `AbstractChat` needs to run outside React. */
class MemoryState implements ChatState<UIMessage> {
  status: ChatStatus = "ready"
  error: Error | undefined = undefined
  messages: Array<UIMessage> = []
  pushMessage = (message: UIMessage) => {
    this.messages = [...this.messages, message]
  }
  popMessage = () => {
    this.messages = this.messages.slice(0, -1)
  }
  replaceMessage = (index: number, message: UIMessage) => {
    this.messages = this.messages.map((m, i) => i === index ? message : m)
  }
  snapshot = <T,>(thing: T): T => structuredClone(thing)
}

/** The AI SDK's own chat (what `useChat` runs), sending on its own once every approval is answered. */
class ShopChat extends AbstractChat<UIMessage> {
  constructor(base: string, id: string) {
    super({
      id,
      transport: new DefaultChatTransport<UIMessage>({ api: `${base}/api/ui/chat`, body: { agent: "shop" } }),
      state: new MemoryState(),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses
    })
  }
  get all() {
    return this.state.messages
  }
  get current() {
    return this.state.status
  }
}

const refunds = (calls: ReadonlyArray<{ readonly name: string }>) => calls.filter((c) => c.name === "refund").length

describe(`approvals of MCP tools (${backend})`, () => {
  const fake = makeFakeProvider()
  fake.answerWith((params) => Effect.succeed(model(params)))
  const env = { ADMIN_TOKEN, MCP_TIMEOUT_MS: "5000" }

  layer(layerTestServer(fake.layer, env), { excludeTestServices: true, timeout: 90_000 })("one replica", (it) => {
    it.effect("approve: the turn stops pending, the decision runs the tool once and the model goes on", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const mcp = yield* startFakeMcp([refundTool, lookupTool])
        assert.strictEqual((yield* putShop(base, mcp.url)).status, 200)

        // A tool without approval runs inside the turn, as ever.
        const looked = yield* turn(base, "a-1", "call shop__lookup {\"order\":7}")
        assert.strictEqual(looked.json.content, "tool said: order 7 is paid")

        const res = yield* turn(base, "a-2", "call shop__refund {\"order\":42}")
        assert.strictEqual(res.status, 200, res.text)
        assert.isUndefined(res.json.toolCalls, "a server tool's call is never the client's")
        const [pending] = res.json.pendingApprovals
        assert.strictEqual(pending.toolName, "shop__refund")
        assert.deepStrictEqual(pending.input, { order: 42 })
        assert.match(pending.approvalId, /^apr_/)
        assert.strictEqual(refunds(mcp.calls), 0, "not run before the decision")
        const ui = yield* request("/api/chats/a-2/ui-messages")
        const part = ui.json.messages.at(-1).parts.at(-1)
        assert.deepStrictEqual([part.type, part.state, part.approval], ["tool-shop__refund", "approval-requested", { id: pending.approvalId }])

        const decided = yield* decide(base, "a-2", pending.approvalId, { approved: true })
        assert.strictEqual(decided.status, 202, decided.text)
        assert.deepStrictEqual(decided.json, { accepted: true })
        const transcript = yield* settledAt(base, "a-2", 4)
        assert.strictEqual(transcript.at(-1)!.content, "tool said: refunded order 42")
        assert.strictEqual(transcript.at(-2)!.id, `approval_${pending.approvalId}`)
        assert.strictEqual(refunds(mcp.calls), 1)

        // The first decision holds; an unknown approval, or another user's chat, is none.
        const again = yield* decide(base, "a-2", pending.approvalId, { approved: false })
        assert.deepStrictEqual([again.status, again.json.code], [409, "approval_decided"])
        const unknown = yield* decide(base, "a-2", "apr_nothing", { approved: true })
        assert.deepStrictEqual([unknown.status, unknown.json.code], [404, "approval_not_found"])
        const otherUser = yield* decide(base, "a-2", pending.approvalId, { approved: true }, { "x-switchboard-user": "mallory" })
        assert.strictEqual(otherUser.status, 404, otherUser.text)
        const badBody = yield* decide(base, "a-2", pending.approvalId, { approved: "yes" })
        assert.deepStrictEqual([badBody.status, badBody.json.code], [400, "invalid_request"])
        assert.strictEqual(refunds(mcp.calls), 1)

        const after = yield* request("/api/chats/a-2/ui-messages")
        const done = after.json.messages.find((m: { id: string }) => m.id === res.json.messageId).parts.at(-1)
        assert.strictEqual(done.state, "output-available")
        assert.deepStrictEqual(done.approval, { id: pending.approvalId, approved: true })
        const metrics = yield* request("/metrics")
        assert.match(metrics.text, /switchboard_approvals_pending \d+/)
      }))

    it.effect("deny with a reason: the tool never runs and the model reads the denial", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const mcp = yield* startFakeMcp([refundTool])
        assert.strictEqual((yield* putShop(base, mcp.url)).status, 200)
        const res = yield* turn(base, "d-1", "call shop__refund {\"order\":9}")
        const { approvalId } = res.json.pendingApprovals[0]
        const decided = yield* decide(base, "d-1", approvalId, { approved: false, reason: "too large an amount" })
        assert.strictEqual(decided.status, 202, decided.text)
        const transcript = yield* settledAt(base, "d-1", 4)
        assert.strictEqual(transcript.at(-1)!.content, "error: denied by the user: too large an amount")
        assert.strictEqual(refunds(mcp.calls), 0)
        const ui = yield* request("/api/chats/d-1/ui-messages")
        const part = ui.json.messages.find((m: { id: string }) => m.id === res.json.messageId).parts.at(-1)
        assert.strictEqual(part.state, "output-denied")
        assert.deepStrictEqual(part.approval, { id: approvalId, approved: false, reason: "too large an amount" })
      }))

    it.effect("a new message instead of a decision denies the pending call first; the decision then is a 409", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const mcp = yield* startFakeMcp([refundTool])
        assert.strictEqual((yield* putShop(base, mcp.url)).status, 200)
        const res = yield* turn(base, "n-1", "call shop__refund {\"order\":3}")
        const { approvalId } = res.json.pendingApprovals[0]
        const next = yield* turn(base, "n-1", "never mind, what are your hours?")
        assert.strictEqual(next.status, 200, next.text)
        assert.strictEqual(next.json.content, "you said: never mind, what are your hours?")
        // The provider read the denial right after the call, before the new message.
        const roles = fake.calls.at(-1)!.messages.map((m) => m.role)
        assert.deepStrictEqual(roles.slice(-3), ["assistant", "tool", "user"])
        const late = yield* decide(base, "n-1", approvalId, { approved: true })
        assert.deepStrictEqual([late.status, late.json.code], [409, "approval_decided"])
        assert.strictEqual(refunds(mcp.calls), 0)
        // A client may not make an approval of its own.
        const forged = yield* postJsonAt(base, "/api/agent/chat", {
          agent: "shop",
          chatId: "n-1",
          messages: [{ id: "forged", role: "assistant", content: "", metadata: { approvals: { apr_x: "c1" } }, timestamp: 1 }]
        })
        assert.deepStrictEqual([forged.status, forged.json.code], [400, "invalid_request"])
      }))

    it.effect("streamed: tool-approval-request follows the call's input and validates against the ai package's schema", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const mcp = yield* startFakeMcp([refundTool])
        assert.strictEqual((yield* putShop(base, mcp.url)).status, 200)
        const res = yield* readEventStream(
          `${base}/api/agent/chat`,
          streamInit({ agent: "shop", chatId: "s-1", messages: [user("u_s1", "call shop__refund {\"order\":5}")] })
        )
        assert.strictEqual(res.status, 200)
        const chunks = res.chunks
        const types = chunks.map((c) => c.type)
        const input = types.indexOf("tool-input-available")
        const asked = types.indexOf("tool-approval-request")
        assert.isTrue(input >= 0 && asked > input, types.join(","))
        for (const chunk of chunks) {
          const checked = yield* Effect.promise(() => Promise.resolve(uiMessageChunkSchema().validate!(chunk)))
          assert.isTrue(checked.success, JSON.stringify(chunk))
        }
        assert.strictEqual(refunds(mcp.calls), 0)
      }))

    it.effect("the ai package's own chat: addToolApprovalResponse sends the decision, and the continuation completes the part", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const mcp = yield* startFakeMcp([refundTool])
        assert.strictEqual((yield* putShop(base, mcp.url)).status, 200)
        const chat = new ShopChat(base, "sdk-1")
        yield* Effect.promise(() => chat.sendMessage({ text: "call shop__refund {\"order\":21}" }))
        const asked = chat.all.at(-1)!.parts.find((p) => p.type === "tool-shop__refund") as { state: string; approval?: { id: string } }
        assert.strictEqual(asked.state, "approval-requested")
        assert.strictEqual(refunds(mcp.calls), 0)
        yield* Effect.promise(async () => chat.addToolApprovalResponse({ id: asked.approval!.id, approved: true }))
        // `sendAutomaticallyWhen` sent the decision; its stream is the continuation.
        yield* eventually(Effect.sync(() => chat.current), (status) => status === "ready", "the continuation's stream to end")
        const parts = chat.all.at(-1)!.parts
        const done = parts.find((p) => p.type === "tool-shop__refund") as { state: string; output?: unknown }
        assert.strictEqual(done.state, "output-available", JSON.stringify(parts))
        assert.include(parts.flatMap((p) => p.type === "text" ? [p.text] : []).join(""), "refunded order 21")
        assert.strictEqual(refunds(mcp.calls), 1)
      }))

    it.effect("useChat's addToolApprovalResponse: the approval-responded part is the decision, and the answer streams the continuation", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const mcp = yield* startFakeMcp([refundTool])
        assert.strictEqual((yield* putShop(base, mcp.url)).status, 200)
        const res = yield* turn(base, "ui-1", "call shop__refund {\"order\":11}")
        const { approvalId } = res.json.pendingApprovals[0]
        const ui = (yield* request("/api/chats/ui-1/ui-messages")).json.messages
        // As `addToolApprovalResponse({ id, approved: true })` leaves the message, then sends it.
        const last = ui.at(-1)
        const part = last.parts.at(-1)
        const responded = { ...last, parts: [...last.parts.slice(0, -1), { ...part, state: "approval-responded", approval: { id: approvalId, approved: true } }] }
        const body = { id: "ui-1", agent: "shop", messages: [...ui.slice(0, -1), responded] }
        const sent = yield* readEventStream(`${base}/api/ui/chat`, streamInit(body))
        assert.strictEqual(sent.status, 200, JSON.stringify(sent.json))
        const chunks = sent.chunks
        assert.strictEqual(chunks[0]!.type, "start")
        assert.strictEqual((chunks[0] as { messageId: string }).messageId, last.id, "the continuation extends the message that asked")
        const output = chunks.find((c) => c.type === "tool-output-available") as { output: unknown } | undefined
        assert.isDefined(output)
        assert.include(streamedText(chunks), "refunded order 11")
        for (const chunk of chunks) {
          const checked = yield* Effect.promise(() => Promise.resolve(uiMessageChunkSchema().validate!(chunk)))
          assert.isTrue(checked.success, JSON.stringify(chunk))
        }
        assert.strictEqual(refunds(mcp.calls), 1)
        // The same request again (a retry): the decision holds, nothing runs twice.
        const retry = yield* readEventStream(`${base}/api/ui/chat`, streamInit(body))
        assert.deepStrictEqual([retry.status, retry.json?.code], [409, "approval_decided"])
        assert.strictEqual(refunds(mcp.calls), 1)
      }))
  })
})

describe(`approvals beside other calls of the same answer (${backend})`, () => {
  const fake = makeFakeProvider()
  /** "two refunds": two calls needing approval; "refund and ask": one beside a client tool's call. */
  fake.answerWith((params) => {
    const last = params.messages.at(-1)!
    if (last.role === "tool") {
      const answers = params.messages.filter((m) => m.role === "tool").slice(-2).map((m) => m.content)
      return Effect.succeed({ content: `all answered: ${answers.join(" | ")}` })
    }
    if (last.content === "two refunds") {
      return Effect.succeed({
        content: "",
        toolCalls: [
          { id: "c_a", name: "shop__refund", args: { order: 1 } },
          { id: "c_b", name: "shop__refund", args: { order: 2 } }
        ]
      })
    }
    return Effect.succeed({
      content: "",
      toolCalls: [{ id: "c_r", name: "shop__refund", args: { order: 3 } }, { id: "c_q", name: "ask_user", args: { question: "sure?" } }]
    })
  })
  layer(layerTestServer(fake.layer, { ADMIN_TOKEN }), { excludeTestServices: true, timeout: 60_000 })("one replica", (it) => {
    it.effect("two approvals in one answer: the first decision's answer is stored and waits; the second's asks the model", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const mcp = yield* startFakeMcp([refundTool])
        assert.strictEqual((yield* putShop(base, mcp.url)).status, 200)
        const res = yield* turn(base, "two-1", "two refunds")
        const [first, second] = res.json.pendingApprovals
        assert.strictEqual(res.json.pendingApprovals.length, 2)
        const calls = fake.calls.length
        assert.strictEqual((yield* decide(base, "two-1", first.approvalId, { approved: true })).status, 202)
        yield* eventually(transcriptAt(base, "two-1"), (m) => m.some((x) => x.id === `approval_${first.approvalId}`), "the first answer stored")
        // Stored, and the model not asked: the other call still waits.
        assert.strictEqual(fake.calls.length, calls)
        assert.strictEqual((yield* decide(base, "two-1", second.approvalId, { approved: false })).status, 202)
        const transcript = yield* settledAt(base, "two-1", 5)
        assert.strictEqual(transcript.at(-1)!.content, "all answered: refunded order 1 | denied by the user")
        assert.strictEqual(refunds(mcp.calls), 1)
      }))

    it.effect("an approval beside a client's call: the decision and the client's result, in either order, then the model", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const mcp = yield* startFakeMcp([refundTool])
        const put = yield* requestAt(base, "/admin/agents/shop", {
          method: "PUT",
          headers: { "content-type": "application/json", ...admin },
          body: JSON.stringify({
            systemPrompt: "shop",
            tools: [{ name: "ask_user", description: "Ask the user", parameters: [{ key: "question", type: "string", description: "The question", required: true }] }],
            mcpServers: [{ name: "shop", url: mcp.url, requireApproval: ["refund"] }]
          })
        })
        assert.strictEqual(put.status, 200, put.text)
        const res = yield* turn(base, "mixed-1", "refund and ask")
        assert.deepStrictEqual(res.json.toolCalls.map((c: { name: string }) => c.name), ["ask_user"])
        const { approvalId } = res.json.pendingApprovals[0]
        assert.strictEqual((yield* decide(base, "mixed-1", approvalId, { approved: true })).status, 202)
        yield* eventually(transcriptAt(base, "mixed-1"), (m) => m.some((x) => x.id === `approval_${approvalId}`), "the decision's answer stored")
        // The client's result comes last: its turn asks the model, which reads both answers.
        const answered = yield* postJsonAt(base, "/api/agent/chat", {
          agent: "shop",
          chatId: "mixed-1",
          messages: [{ id: "r_q", role: "tool", content: "yes", toolResult: { toolCallId: "c_q", name: "ask_user", result: "yes" }, timestamp: 2 }]
        })
        assert.strictEqual(answered.status, 200, answered.text)
        assert.strictEqual(answered.json.content, "all answered: refunded order 3 | yes")
        assert.strictEqual(refunds(mcp.calls), 1)

        // The other order: the client's result first is stored, the answer says what still waits; the decision then asks.
        const again = yield* turn(base, "mixed-2", "refund and ask")
        const waiting = again.json.pendingApprovals[0].approvalId
        const early = yield* postJsonAt(base, "/api/agent/chat", {
          agent: "shop",
          chatId: "mixed-2",
          messages: [{ id: "r_q2", role: "tool", content: "yes", toolResult: { toolCallId: "c_q", name: "ask_user", result: "yes" }, timestamp: 2 }]
        })
        assert.strictEqual(early.status, 200, early.text)
        assert.deepStrictEqual([early.json.content, early.json.messageId], ["", again.json.messageId])
        assert.deepStrictEqual(early.json.pendingApprovals.map((p: { approvalId: string }) => p.approvalId), [waiting])
        assert.strictEqual((yield* decide(base, "mixed-2", waiting, { approved: true })).status, 202)
        const transcript = yield* settledAt(base, "mixed-2", 5)
        assert.strictEqual(transcript.at(-1)!.content, "all answered: yes | refunded order 3")
        assert.strictEqual(refunds(mcp.calls), 2)
      }))
  })
})

describe(`approvals across replicas (${backend})`, () => {
  it.live("decided on the other replica; two decisions racing on two replicas; a replica gone before or while the tool ran", () =>
    Effect.gen(function*() {
      const db = yield* makeTestDatabase
      const fake = makeFakeProvider()
      fake.answerWith((params) => Effect.succeed(model(params)))
      const memoMap = yield* Layer.makeMemoMap
      const scope = yield* Effect.scope
      const replica = () =>
        Layer.buildWithMemoMap(Layer.fresh(layerReplica(fake.layer, db.client(), {}, { ADMIN_TOKEN, LLM_TIMEOUT_MS: "1000", TURN_MARKER_GRACE_MS: "0" })), memoMap, scope).pipe(
          Effect.flatMap((services) => baseUrl.pipe(Effect.provide(services)))
        )
      const [a, b] = [yield* replica(), yield* replica()]
      const mcp = yield* startFakeMcp([refundTool])
      assert.strictEqual((yield* putShop(a, mcp.url)).status, 200)

      // Asked on A, decided on B: B runs the continuation.
      const first = yield* turn(a, "r-1", "call shop__refund {\"order\":1}")
      const decidedOnB = yield* decide(b, "r-1", first.json.pendingApprovals[0].approvalId, { approved: true })
      assert.strictEqual(decidedOnB.status, 202, decidedOnB.text)
      assert.strictEqual((yield* settledAt(a, "r-1", 4)).at(-1)!.content, "tool said: refunded order 1")
      assert.strictEqual(refunds(mcp.calls), 1)

      // Two decisions at once, one on each replica: one is taken, the tool runs once.
      for (let round = 0; round < 5; round++) {
        const chatId = `race-${round}`
        const asked = yield* turn(a, chatId, `call shop__refund {"order":${100 + round}}`)
        const { approvalId } = asked.json.pendingApprovals[0]
        const before = refunds(mcp.calls)
        const answers = yield* Effect.all([
          decide(a, chatId, approvalId, { approved: true }),
          decide(b, chatId, approvalId, { approved: true })
        ], { concurrency: 2 })
        assert.deepStrictEqual(answers.map((r) => r.status).sort(), [202, 409])
        yield* settledAt(a, chatId, 4)
        assert.strictEqual(refunds(mcp.calls) - before, 1, `${chatId}: the tool ran once`)
      }

      // A replica that died after the decision, before the tool started: its lease expires, the
      // other's sweep runs it once. One that died while the tool ran: never run again, the model
      // reads that it was interrupted.
      for (const state of ["decided", "running"] as const) {
        const chatId = `dead-${state}`
        const asked = yield* turn(a, chatId, "call shop__refund {\"order\":77}")
        const { approvalId, toolCallId } = asked.json.pendingApprovals[0]
        const before = refunds(mcp.calls)
        yield* Effect.gen(function*() {
          const client = yield* SqlClient.SqlClient
          yield* client`
            INSERT INTO approval_decisions (chat_id, approval_id, tool_call_id, approved, state, owner, lease_until)
            SELECT id, ${approvalId}, ${toolCallId}, true, ${state}, 'approvals:gone:1:dead', now() + interval '300 milliseconds'
            FROM chats WHERE id = ${chatId}`
        }).pipe(Effect.provide(db.client()))
        const transcript = yield* settledAt(b, chatId, 4)
        if (state === "decided") {
          assert.strictEqual(transcript.at(-1)!.content, "tool said: refunded order 77")
          assert.strictEqual(refunds(mcp.calls) - before, 1)
        } else {
          assert.match(transcript.at(-1)!.content, /^error: the tool's run was interrupted/)
          assert.strictEqual(refunds(mcp.calls) - before, 0)
        }
      }
    }), { timeout: 120_000 })
})
