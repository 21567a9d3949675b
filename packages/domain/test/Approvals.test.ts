import { assert, describe, it } from "@effect/vitest"
import { validateUIMessages } from "ai"
import { Schema } from "effect"
import type { ChatMessage, UiMessagePart, UiToolPart } from "../src/index.ts"
import { approvalResponsesOf, deniedError, inCallOrder, pendingApprovalsIn, toUiMessages, UiMessage } from "../src/index.ts"

const at = 1_700_000_000_000
const toolPart = (parts: ReadonlyArray<UiMessagePart>, type: string) => parts.find((p) => p.type === type) as UiToolPart

const userMsg = (id: string, content: string): ChatMessage => ({ id, role: "user", content, timestamp: at })
const asking: ChatMessage = {
  id: "a1",
  role: "assistant",
  content: "",
  toolCalls: [{ id: "c1", name: "shop__refund", args: { order: 4 } }, { id: "c2", name: "lookup", args: {} }],
  metadata: { approvals: { apr_1: "c1" } },
  timestamp: at
}
const answer = (callId: string, id: string, extra: Partial<ChatMessage> = {}): ChatMessage => ({
  id,
  role: "tool",
  content: "ok",
  toolResult: { toolCallId: callId, name: "x", result: "ok" },
  timestamp: at,
  ...extra
})

describe("approvals in the transcript", () => {
  it("a call named in metadata.approvals and unanswered is pending; its answer ends that", () => {
    assert.deepStrictEqual(pendingApprovalsIn([userMsg("u1", "go"), asking]), [
      { approvalId: "apr_1", toolCallId: "c1", toolName: "shop__refund", input: { order: 4 } }
    ])
    assert.deepStrictEqual(pendingApprovalsIn([userMsg("u1", "go"), asking, answer("c1", "approval_apr_1")]), [])
    assert.strictEqual(deniedError(undefined), "denied by the user")
    assert.strictEqual(deniedError("no"), "denied by the user: no")
  })

  it("the UIMessages show approval-requested, then output-available or output-denied with the decision, valid for the AI SDK", async () => {
    const pending = toUiMessages([userMsg("u1", "go"), asking, answer("c2", "result_c2")])
    const part = toolPart(pending[1]!.parts, "tool-shop__refund")
    assert.deepStrictEqual(part, { type: "tool-shop__refund", toolCallId: "c1", input: { order: 4 }, state: "approval-requested", approval: { id: "apr_1" } })
    const denied = toUiMessages([
      userMsg("u1", "go"),
      asking,
      answer("c2", "result_c2"),
      answer("c1", "approval_apr_1", {
        toolResult: { toolCallId: "c1", name: "shop__refund", error: "denied by the user: no" },
        metadata: { approval: { id: "apr_1", approved: false, reason: "no" } }
      })
    ])
    const deniedPart = toolPart(denied[1]!.parts, "tool-shop__refund")
    assert.deepStrictEqual([deniedPart.state, deniedPart.approval], ["output-denied", { id: "apr_1", approved: false, reason: "no" }])
    const approved = toUiMessages([
      userMsg("u1", "go"),
      asking,
      answer("c2", "result_c2"),
      answer("c1", "approval_apr_1", { metadata: { approval: { id: "apr_1", approved: true } } })
    ])
    const approvedPart = toolPart(approved[1]!.parts, "tool-shop__refund")
    assert.deepStrictEqual([approvedPart.state, approvedPart.approval], ["output-available", { id: "apr_1", approved: true }])
    for (const messages of [pending, denied, approved]) await validateUIMessages({ messages: messages as never })
  })

  it("addToolApprovalResponse's part is read as the decision; an approval state without its approval is refused", () => {
    const decode = Schema.decodeUnknownSync(Schema.Array(UiMessage))
    const messages = decode([
      { id: "u1", role: "user", parts: [{ type: "text", text: "go" }] },
      {
        id: "a1",
        role: "assistant",
        parts: [{ type: "tool-shop__refund", toolCallId: "c1", input: {}, state: "approval-responded", approval: { id: "apr_1", approved: false, reason: "no" } }]
      }
    ])
    assert.deepStrictEqual(approvalResponsesOf(messages), [{ approvalId: "apr_1", toolCallId: "c1", approved: false, reason: "no" }])
    assert.throws(() => decode([{ id: "a1", role: "assistant", parts: [{ type: "tool-x", toolCallId: "c1", input: {}, state: "output-denied" }] }]))
  })

  it("inCallOrder puts a late answer right after its call's answered neighbours; an ordered transcript is returned as it is", () => {
    const ordered = [userMsg("u1", "go"), asking, answer("c2", "r2"), answer("c1", "r1"), userMsg("u2", "next")]
    assert.strictEqual(inCallOrder(ordered), ordered)
    const late = [userMsg("u1", "go"), asking, answer("c2", "r2"), userMsg("u2", "next"), answer("c1", "r1")]
    assert.deepStrictEqual(inCallOrder(late).map((m) => m.id), ["u1", "a1", "r2", "r1", "u2"])
    const twoLate = [asking, userMsg("u2", "next"), answer("c1", "r1"), userMsg("u3", "more"), answer("c2", "r2")]
    assert.deepStrictEqual(inCallOrder(twoLate).map((m) => m.id), ["a1", "r1", "r2", "u2", "u3"])
    // A result answering no call stays where it is.
    const stray = [userMsg("u1", "go"), answer("zz", "rz"), userMsg("u2", "b")]
    assert.strictEqual(inCallOrder(stray), stray)
  })
})
