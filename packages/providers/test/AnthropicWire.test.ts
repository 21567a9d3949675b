import { assert, describe, it } from "@effect/vitest"
import { TranscribeVideo } from "@switchboard/domain"
import type { ToolSchema } from "@switchboard/domain"
import {
  buildMessagesRequest,
  buildMessagesStreamRequest,
  parseMessage,
  toAnthropicMessages,
  toAnthropicSystem,
  toAnthropicTools
} from "../src/anthropic/AnthropicWire.ts"
import { toolResultContent } from "../src/WireParts.ts"
import { requestProblem } from "../src/testing/FakeAnthropic.ts"
import { assistant, failure, message, params, success, toolMessage, transcribeVideoJsonSchema, user } from "./Messages.ts"

const options = { model: "claude-test", maxTokens: 1024 }

/** The body must also pass the rules the fake server (and the real API) enforce. */
const acceptable = (body: unknown) => assert.isUndefined(requestProblem(body), JSON.stringify(body))

const answer = (content: unknown) => ({ id: "msg_1", type: "message", role: "assistant", content, stop_reason: "end_turn" })

describe("AnthropicWire: tools", () => {
  it("converts tool schemas to { name, description, input_schema } with the shared JSON Schema", () => {
    assert.deepStrictEqual(toAnthropicTools([
      TranscribeVideo,
      {
        name: "lookup",
        description: "",
        parameters: [
          { key: "query", type: "string", required: true, description: "what to look up" },
          { key: "limit", type: "integer", required: false },
          { key: "mode", type: "string", required: true, enum: ["fast", "deep"] }
        ]
      }
    ]), [
      {
        name: "transcribe_video",
        description: TranscribeVideo.description,
        input_schema: transcribeVideoJsonSchema
      },
      {
        // An empty description is left out.
        name: "lookup",
        input_schema: {
          type: "object",
          properties: {
            query: { type: "string", description: "what to look up" },
            limit: { type: "integer" },
            mode: { type: "string", enum: ["fast", "deep"] }
          },
          required: ["query", "mode"],
          additionalProperties: false
        }
      }
    ])
  })
})

describe("AnthropicWire: request body", () => {
  it("puts model, max_tokens and the system prompt at the top level, and omits tools when none are offered", () => {
    const body = buildMessagesRequest(params([user("hello")], [], "SYSTEM"), options)
    assert.deepStrictEqual(body, {
      model: "claude-test",
      max_tokens: 1024,
      system: "SYSTEM",
      messages: [{ role: "user", content: "hello" }]
    })
    assert.isFalse("tools" in body)
    acceptable(body)
  })

  it("appends system-role messages to the system prompt and keeps them out of messages", () => {
    const chat = params([message("system", "be brief"), user("hi"), message("system", "  "), message("system", "use metric units")], [], "SYSTEM")
    assert.strictEqual(toAnthropicSystem(chat), "SYSTEM\n\nbe brief\n\nuse metric units")
    assert.deepStrictEqual(toAnthropicMessages(chat), [{ role: "user", content: "hi" }])
  })

  it("omits system when there is no system text at all", () => {
    const body = buildMessagesRequest(params([user("hi")], [], ""), options)
    assert.isFalse("system" in body)
    assert.strictEqual(toAnthropicSystem(params([message("system", "only this"), user("x")], [], "")), "only this")
  })

  it("offers tools with input_schema", () => {
    const body = buildMessagesRequest(params([user("transcribe")], [TranscribeVideo]), options)
    assert.deepStrictEqual(body.tools?.map((t) => t.name), ["transcribe_video"])
    acceptable(body)
  })

  it("converts a full tool loop: tool_use blocks, then ONE user message of tool_result blocks, is_error on failures", () => {
    const chat = params([
      user("transcribe both clips"),
      assistant("Transcribing both.", {
        toolCalls: [
          { id: "toolu_1", name: "transcribe_video", args: { assetId: "a1" } },
          { id: "toolu_2", name: "transcribe_video", args: { assetId: "a2", language: "en" } }
        ]
      }),
      toolMessage("toolu_1", "transcribe_video", { result: { text: "hello" } }),
      toolMessage("toolu_2", "transcribe_video", { error: "no such asset" }),
      assistant("", { toolCalls: [{ id: "toolu_3", name: "transcribe_video", args: {} }] }),
      toolMessage("toolu_3", "transcribe_video", {}),
      assistant("Clip 1 says hello; clip 2 is missing.")
    ], [TranscribeVideo])
    const body = buildMessagesRequest(chat, options)
    assert.deepStrictEqual(body.messages, [
      { role: "user", content: "transcribe both clips" },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Transcribing both." },
          { type: "tool_use", id: "toolu_1", name: "transcribe_video", input: { assetId: "a1" } },
          { type: "tool_use", id: "toolu_2", name: "transcribe_video", input: { assetId: "a2", language: "en" } }
        ]
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: "{\"result\":{\"text\":\"hello\"}}" },
          { type: "tool_result", tool_use_id: "toolu_2", content: "{\"error\":\"no such asset\"}", is_error: true }
        ]
      },
      // No empty text block beside the call.
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_3", name: "transcribe_video", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_3", content: "{\"result\":null}" }] },
      { role: "assistant", content: "Clip 1 says hello; clip 2 is missing." }
    ])
    acceptable(body)
  })

  it("sends a tool result as the same JSON text as the OpenAI wire", () => {
    const tool = toolMessage("toolu_1", "t", { result: [1, "two"] })
    const [result] = toAnthropicMessages(params([assistant("", { toolCalls: [{ id: "toolu_1", name: "t", args: {} }] }), tool]))
      .slice(1)
    assert.deepStrictEqual(result?.content, [{
      type: "tool_result",
      tool_use_id: "toolu_1",
      content: toolResultContent(tool.toolResult!)
    }])
  })

  it("merges consecutive same-role messages, tool results before text", () => {
    const body = buildMessagesRequest(params([
      user("first"),
      user("second"),
      assistant("thinking aloud"),
      assistant("", { toolCalls: [{ id: "toolu_1", name: "t", args: {} }] }),
      // A user message landing between the call and its result (a steer message, say).
      user("by the way"),
      toolMessage("toolu_1", "t", { result: "ok" }),
      user("and then")
    ]), options)
    assert.deepStrictEqual(body.messages, [
      { role: "user", content: [{ type: "text", text: "first" }, { type: "text", text: "second" }] },
      {
        role: "assistant",
        content: [{ type: "text", text: "thinking aloud" }, { type: "tool_use", id: "toolu_1", name: "t", input: {} }]
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: "{\"result\":\"ok\"}" },
          { type: "text", text: "by the way" },
          { type: "text", text: "and then" }
        ]
      }
    ])
    acceptable(body)
  })

  it("never sends empty or whitespace-only text, and drops messages left without content", () => {
    const body = buildMessagesRequest(params([
      user("hello"),
      assistant(""),
      user("   "),
      user("again"),
      assistant(" \n", { toolCalls: [{ id: "toolu_1", name: "t", args: {} }] }),
      toolMessage("toolu_1", "t", { result: "x" }, "")
    ]), options)
    assert.deepStrictEqual(body.messages, [
      { role: "user", content: [{ type: "text", text: "hello" }, { type: "text", text: "again" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "t", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "{\"result\":\"x\"}" }] }
    ])
    assert.notInclude(JSON.stringify(body), "\"text\":\"\"")
    acceptable(body)
  })

  it("never sends parts or metadata; text parts stand in only for empty content, data parts never", () => {
    const body = buildMessagesRequest(params([
      user("the content", {
        id: "steer_job1",
        parts: [{ type: "text", text: "PART-TEXT" }, { type: "data-subagent-artifact", data: { secret: "DATA-PART" } }],
        metadata: { subagentResult: { jobId: "METADATA-VALUE" } }
      }),
      assistant("ok"),
      user("", { parts: [{ type: "text", text: "first" }, { type: "data-x", data: "DATA-ONLY" }, { type: "text", text: "second" }] }),
      assistant("", { parts: [{ type: "data-only", data: "ASSISTANT-DATA" }] })
    ]), options)
    const wire = JSON.stringify(body)
    for (const leaked of ["PART-TEXT", "DATA-PART", "DATA-ONLY", "ASSISTANT-DATA", "METADATA-VALUE", "steer_job1", "parts", "metadata", "data-"]) {
      assert.notInclude(wire, leaked)
    }
    assert.deepStrictEqual(body.messages, [
      { role: "user", content: "the content" },
      { role: "assistant", content: "ok" },
      { role: "user", content: "first\nsecond" }
    ])
  })
})

describe("AnthropicWire: streamed request", () => {
  it("is the same request, streamed, and the API would take it", () => {
    const chatParams = params([user("hi")], [TranscribeVideo], "S")
    const body = buildMessagesStreamRequest(chatParams, options)
    assert.deepStrictEqual(body, { ...buildMessagesRequest(chatParams, options), stream: true })
    acceptable(body)
  })
})

describe("AnthropicWire: responses", () => {
  it("joins text blocks as content and reads tool_use blocks as tool calls", () => {
    const response = success(parseMessage(answer([
      { type: "text", text: "Let me " },
      { type: "text", text: "check." },
      { type: "tool_use", id: "toolu_a", name: "transcribe_video", input: { assetId: "a1" } },
      { type: "tool_use", id: "toolu_b", name: "transcribe_video", input: {} }
    ])))
    assert.deepStrictEqual(response, {
      content: "Let me check.",
      toolCalls: [
        { id: "toolu_a", name: "transcribe_video", args: { assetId: "a1" } },
        { id: "toolu_b", name: "transcribe_video", args: {} }
      ]
    })
  })

  it("reads the usage: the whole prompt as input, cache reads and writes included, the reads as cached", () => {
    const withUsage = (usage: unknown) => success(parseMessage({ ...answer([]), usage })).usage
    assert.deepStrictEqual(withUsage({ input_tokens: 10, output_tokens: 3 }), { inputTokens: 10, outputTokens: 3 })
    assert.deepStrictEqual(
      withUsage({ input_tokens: 10, output_tokens: 3, cache_read_input_tokens: 200, cache_creation_input_tokens: 50 }),
      { inputTokens: 260, outputTokens: 3, cachedInputTokens: 200 }
    )
    for (const unreadable of [undefined, null, { input_tokens: 10 }, { input_tokens: "10", output_tokens: 3 }]) {
      assert.isUndefined(withUsage(unreadable), JSON.stringify(unreadable))
    }
  })

  it("omits toolCalls when there are none, and accepts an empty content array", () => {
    assert.deepStrictEqual(success(parseMessage(answer([{ type: "text", text: "Hello" }]))), { content: "Hello" })
    assert.deepStrictEqual(success(parseMessage(answer([]))), { content: "" })
  })

  it("a tool_use whose input is not an object → args {} and invalidArgs", () => {
    const response = success(parseMessage(answer([
      { type: "tool_use", id: "toolu_arr", name: "t", input: ["a1"] },
      { type: "tool_use", id: "toolu_str", name: "t", input: "{\"assetId\":\"a1\"}" },
      { type: "tool_use", id: "toolu_null", name: "t", input: null },
      { type: "tool_use", id: "toolu_none", name: "t" }
    ])))
    assert.deepStrictEqual(response.toolCalls, [
      { id: "toolu_arr", name: "t", args: {}, invalidArgs: "arguments must be a JSON object, got an array" },
      { id: "toolu_str", name: "t", args: {}, invalidArgs: "arguments must be a JSON object, got a string" },
      { id: "toolu_null", name: "t", args: {}, invalidArgs: "arguments must be a JSON object, got null" },
      { id: "toolu_none", name: "t", args: {}, invalidArgs: "arguments are missing" }
    ])
  })

  it("skips block types that are not ours (thinking, server tools) and derives a missing id", () => {
    const response = success(parseMessage(answer([
      { type: "thinking", thinking: "hmm", signature: "sig" },
      { type: "redacted_thinking", data: "xyz" },
      { type: "text", text: "Done." },
      { type: "tool_use", name: "t", input: {} }
    ])))
    assert.deepStrictEqual(response, { content: "Done.", toolCalls: [{ id: "call_3", name: "t", args: {} }] })
  })

  it("rejects bodies that are not messages as InvalidResponse", () => {
    for (const body of [
      null,
      "text",
      [1],
      {},
      { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
      answer("just a string"),
      answer({ type: "text", text: "x" }),
      answer([1]),
      answer([{ type: "text" }]),
      answer([{ type: "text", text: 42 }]),
      answer([{ type: "tool_use", id: "toolu_1", input: {} }]),
      answer([{ type: "tool_use", id: "toolu_1", name: "", input: {} }])
    ]) {
      const error = failure(parseMessage(body))
      assert.strictEqual(error.reason, "InvalidResponse", JSON.stringify(body))
      assert.match(error.message, /^Invalid Anthropic message: /)
    }
  })
})

describe("FakeAnthropic's request rules (what `acceptable` relies on)", () => {
  const base = { model: "m", max_tokens: 10 }
  const call = { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "t", input: {} }] }
  const result = { type: "tool_result", tool_use_id: "toolu_1", content: "{}" }

  it("refuses what the API refuses", () => {
    const bad: Array<[unknown, RegExp]> = [
      [{ ...base, messages: [{ role: "user", content: "a" }, { role: "user", content: "b" }] }, /roles must alternate/],
      [{ ...base, messages: [{ role: "user", content: [{ type: "text", text: " " }] }] }, /non-whitespace text/],
      [{ ...base, messages: [{ role: "user", content: "" }] }, /non-empty content/],
      [{ ...base, messages: [{ role: "user", content: "a" }, call, { role: "user", content: "b" }] }, /without `tool_result`/],
      [{ ...base, messages: [{ role: "user", content: "a" }, call, { role: "user", content: [{ type: "text", text: "b" }, result] }] }, /must come first/],
      [{ ...base, messages: [{ role: "user", content: [result] }] }, /unexpected `tool_use_id`/],
      [{ ...base, messages: [{ role: "system", content: "a" }] }, /role/],
      [{ model: "m", messages: [{ role: "user", content: "a" }] }, /max_tokens/],
      [{ ...base, messages: [{ role: "user", content: "a" }], tools: [{ name: "t", input_schema: {} }] }, /input_schema/]
    ]
    for (const [body, expected] of bad) assert.match(requestProblem(body) ?? "(accepted)", expected, JSON.stringify(body))
  })

  it("accepts a well-formed tool loop", () => {
    acceptable({ ...base, system: "s", messages: [{ role: "user", content: "a" }, call, { role: "user", content: [result] }] })
  })
})

describe("AnthropicWire: planner and sub-agent options", () => {
  const tool: ToolSchema = {
    name: "click",
    description: "Click at a point",
    parameters: [],
    inputSchema: { type: "object", properties: { x: { type: "integer" } }, required: ["x"] }
  }

  it("sends the tool's own JSON Schema, the call's model, one tool call asked for, and the images as image blocks", () => {
    const body = buildMessagesRequest({
      ...params([user("what now?")], [tool], "SYS"),
      model: "vision-model",
      toolChoice: "required",
      images: [{ mediaType: "image/png", data: "iVBORw0KGgo=" }]
    }, options)
    assert.strictEqual(body.model, "vision-model")
    assert.deepStrictEqual(body.tools?.[0]?.input_schema, tool.inputSchema)
    assert.deepStrictEqual(body.tool_choice, { type: "any", disable_parallel_tool_use: true })
    assert.deepStrictEqual(body.messages, [{
      role: "user",
      content: [
        { type: "text", text: "what now?" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }
      ]
    }])
    assert.isUndefined(requestProblem(body))
  })
})
