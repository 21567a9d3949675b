/**
 * The fold of a streamed turn's chunks: the answer the non-streamed route
 * would have given (text, client tool calls, jobs, the message id), and the
 * state a UI shows while it streams.
 */
import type { ChatResponse, UiChunk } from "@switchboard/domain"
import { assert, describe, it } from "@effect/vitest"
import { chunksOfResponse, emptyProgress, foldChunk, foldChunks, responseOf } from "../src/chat/TurnChunks.ts"
import { turnChunks } from "./support/FakeStream.ts"

describe("TurnChunks", () => {
  it("text deltas are the content, calls without an output the client's tool calls, acknowledged calls the jobs", () => {
    const progress = foldChunks(turnChunks({
      messageId: "srv_1",
      deltas: ["Let me ", "look ", "that up."],
      jobs: [{ id: "job_1", kind: "research", toolCallId: "call_r" }],
      toolCalls: [{ id: "call_t", name: "transcribe_video", args: { assetId: "vid_1" } }],
      chatId: "chat_1"
    }))
    assert.deepStrictEqual(responseOf(progress), {
      content: "Let me look that up.",
      messageId: "srv_1",
      toolCalls: [{ id: "call_t", name: "transcribe_video", args: { assetId: "vid_1" } }],
      jobs: [{ id: "job_1", kind: "research", toolCallId: "call_r" }]
    })
    assert.isTrue(progress.finished)
    assert.isFalse(progress.stopped)
    assert.strictEqual(progress.chatId, "chat_1")
    assert.deepStrictEqual(progress.usage, { inputTokens: 10, outputTokens: 5 })
    assert.strictEqual(progress.finishReason, "tool-calls")
  })

  it("while it streams: the text so far, and the call whose input is arriving", () => {
    const chunks = turnChunks({
      messageId: "srv_2",
      deltas: ["Hel", "lo"],
      toolCalls: [{ id: "call_1", name: "lookup", args: { q: "sigma" } }]
    })
    const seen: Array<{ content: string; active: string | null; input: string }> = []
    let progress = emptyProgress
    for (const chunk of chunks) {
      progress = foldChunk(progress, chunk)
      seen.push({ content: progress.content, active: progress.activeToolCall?.toolName ?? null, input: progress.activeToolCall?.inputText ?? "" })
    }
    const at = (type: UiChunk["type"], nth = 0) => seen[chunks.map((c) => c.type).indexOf(type) + nth]!
    assert.strictEqual(at("start").content, "")
    assert.strictEqual(at("text-delta").content, "Hel")
    assert.strictEqual(at("text-delta", 1).content, "Hello")
    assert.deepStrictEqual(at("tool-input-start"), { content: "Hello", active: "lookup", input: "" })
    assert.deepStrictEqual(at("tool-input-delta", 1), { content: "Hello", active: "lookup", input: `{"q":"sigma"}` })
    assert.strictEqual(at("tool-input-available").active, null)
    assert.strictEqual(responseOf(progress).toolCalls?.length, 1)
  })

  it("a stopped turn, an error, and arguments that are not a JSON object", () => {
    const stopped = foldChunks(turnChunks({ messageId: "srv_3", deltas: ["Half an"], stopped: true }))
    assert.isTrue(stopped.stopped)
    assert.strictEqual(responseOf(stopped).content, "Half an")

    const failed = foldChunks([
      { type: "start", messageId: "srv_4" },
      { type: "text-delta", id: "t", delta: "So" },
      { type: "error", errorText: "LLM provider error" }
    ])
    assert.strictEqual(failed.error, "LLM provider error")
    assert.isFalse(failed.finished)

    const invalid = foldChunks([
      { type: "start", messageId: "srv_5" },
      { type: "tool-input-available", toolCallId: "c1", toolName: "lookup", input: "not json" },
      { type: "tool-input-available", toolCallId: "c2", toolName: "lookup", input: [1, 2] },
      { type: "finish" }
    ])
    assert.deepStrictEqual(responseOf(invalid).toolCalls, [
      { id: "c1", name: "lookup", args: {}, invalidArgs: "not json" },
      { id: "c2", name: "lookup", args: {}, invalidArgs: "[1,2]" }
    ])
  })

  it("an output that is not a job's acknowledgement removes the call without making a job", () => {
    const progress = foldChunks([
      { type: "start", messageId: "srv_6" },
      { type: "tool-input-available", toolCallId: "c1", toolName: "server_side", input: {} },
      { type: "tool-output-available", toolCallId: "c1", output: { ok: true } },
      { type: "finish" }
    ])
    assert.deepStrictEqual(responseOf(progress), { content: "", messageId: "srv_6" })
  })

  it("chunksOfResponse is the fold's inverse", () => {
    const responses: ReadonlyArray<ChatResponse> = [
      { content: "Hello!", messageId: "srv_a" },
      { content: "", messageId: "srv_b", toolCalls: [{ id: "c1", name: "transcribe_video", args: {} }] },
      { content: "On it.", messageId: "srv_c", jobs: [{ id: "job_9", kind: "demo", toolCallId: "call_d" }] },
      {
        content: "both",
        messageId: "srv_d",
        toolCalls: [{ id: "c2", name: "lookup", args: {}, invalidArgs: "{oops" }, { id: "c3", name: "lookup", args: { q: "x" } }],
        jobs: [{ id: "job_1", kind: "research", toolCallId: "call_r" }, { id: "job_2", kind: "visual", toolCallId: "call_v" }]
      },
      // A kind an operator defined (docs/subagents.md) is a job like a built-in one.
      { content: "Refunding.", messageId: "srv_e", jobs: [{ id: "job_3", kind: "refund-run", toolCallId: "call_x" }] }
    ]
    for (const response of responses) assert.deepStrictEqual(responseOf(foldChunks(chunksOfResponse(response))), response)
  })
})
