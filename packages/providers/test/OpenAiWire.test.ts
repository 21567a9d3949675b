import { assert, describe, it } from "@effect/vitest"
import { TranscribeVideo } from "@switchboard/domain"
import type { ToolSchema } from "@switchboard/domain"
import { toParametersSchema } from "@switchboard/domain"
import { buildChatRequest, buildChatStreamRequest, parseChatCompletion, parseTranscription, toWireTools } from "../src/openai/OpenAiWire.ts"
import { parseToolArguments } from "../src/WireParts.ts"
import { assistant, failure, message, params, success, toolMessage, user } from "./Messages.ts"

const completion = (message: unknown) => ({ id: "c", object: "chat.completion", created: 0, model: "m", choices: [{ index: 0, message }] })

describe("OpenAiWire: tool schemas", () => {
  it("converts the spec's transcribe_video parameters to a closed JSON Schema object", () => {
    const schema: ToolSchema = {
      name: "transcribe_video",
      description: "Transcribe a video",
      parameters: [{ key: "assetId", type: "string", required: false }]
    }
    assert.deepStrictEqual(toWireTools([schema]), [{
      type: "function",
      function: {
        name: "transcribe_video",
        description: "Transcribe a video",
        parameters: {
          type: "object",
          properties: { assetId: { type: "string" } },
          required: [],
          additionalProperties: false
        }
      }
    }])
  })

  it("keeps descriptions and enums, lists required keys, leaves arrays and objects unconstrained", () => {
    assert.deepStrictEqual(
      toParametersSchema([
        { key: "q", type: "string", required: true, description: "the query", enum: ["a", "b"] },
        { key: "n", type: "integer", required: true },
        { key: "tags", type: "array", required: false },
        { key: "opts", type: "object", required: false, description: "" },
        { key: "ratio", type: "number", required: false },
        { key: "ok", type: "boolean", required: true, enum: [] }
      ]),
      {
        type: "object",
        properties: {
          q: { type: "string", description: "the query", enum: ["a", "b"] },
          n: { type: "integer" },
          tags: { type: "array" },
          opts: { type: "object" },
          ratio: { type: "number" },
          ok: { type: "boolean" }
        },
        required: ["q", "n", "ok"],
        additionalProperties: false
      }
    )
  })

  it("omits an empty tool description", () => {
    const [tool] = toWireTools([{ name: "t", description: "", parameters: [] }])
    assert.deepStrictEqual(tool?.function, {
      name: "t",
      parameters: { type: "object", properties: {}, required: [], additionalProperties: false }
    })
  })
})

describe("OpenAiWire: request body", () => {
  it("puts the system prompt first and maps every role", () => {
    const body = buildChatRequest(params([
      message("system", "be brief"),
      user("transcribe my video"),
      assistant("", { toolCalls: [{ id: "call_1", name: "transcribe_video", args: { assetId: "a1" } }] }),
      toolMessage("call_1", "transcribe_video", { result: { text: "hello" } }),
      toolMessage("call_2", "transcribe_video", { error: "no such asset" }),
      toolMessage("call_3", "transcribe_video", {}),
      assistant("Done.")
    ], [TranscribeVideo], "SYSTEM"), "gpt-test")

    assert.strictEqual(body.model, "gpt-test")
    assert.deepStrictEqual(body.messages, [
      { role: "system", content: "SYSTEM" },
      { role: "system", content: "be brief" },
      { role: "user", content: "transcribe my video" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "transcribe_video", arguments: "{\"assetId\":\"a1\"}" } }]
      },
      { role: "tool", tool_call_id: "call_1", content: "{\"result\":{\"text\":\"hello\"}}" },
      { role: "tool", tool_call_id: "call_2", content: "{\"error\":\"no such asset\"}" },
      { role: "tool", tool_call_id: "call_3", content: "{\"result\":null}" },
      { role: "assistant", content: "Done." }
    ])
    assert.strictEqual(body.tools?.length, 1)
  })

  it("keeps assistant content beside tool calls", () => {
    const body = buildChatRequest(params([
      assistant("Let me look.", { toolCalls: [{ id: "c", name: "t", args: {} }] })
    ], [], ""), "m")
    assert.deepStrictEqual(body.messages, [{
      role: "assistant",
      content: "Let me look.",
      tool_calls: [{ id: "c", type: "function", function: { name: "t", arguments: "{}" } }]
    }])
  })

  it("omits tools when none are offered, and an empty system prompt", () => {
    const body = buildChatRequest(params([user("hi")], [], ""), "m")
    assert.deepStrictEqual(body, { model: "m", messages: [{ role: "user", content: "hi" }] })
    assert.isFalse("tools" in body)
  })

  it("never sends parts or metadata; text parts stand in only for empty content, data parts never", () => {
    const body = buildChatRequest(params([
      user("the content", {
        parts: [{ type: "text", text: "PART-TEXT" }, { type: "data-subagent-artifact", data: { secret: "DATA-PART" } }],
        metadata: { subagentResult: { jobId: "METADATA-VALUE" } }
      }),
      user("", { parts: [{ type: "text", text: "first" }, { type: "data-x", data: "DATA-ONLY" }, { type: "text", text: "second" }] })
    ]), "m")
    const wire = JSON.stringify(body)
    for (const leaked of ["PART-TEXT", "DATA-PART", "DATA-ONLY", "METADATA-VALUE", "parts", "metadata", "data-"]) {
      assert.notInclude(wire, leaked)
    }
    assert.deepStrictEqual(body.messages.slice(1), [
      { role: "user", content: "the content" },
      { role: "user", content: "first\nsecond" }
    ])
  })
})

describe("OpenAiWire: tool call arguments", () => {
  it("parses a JSON object", () => {
    assert.deepStrictEqual(parseToolArguments("{\"assetId\":\"a1\",\"n\":2}"), { args: { assetId: "a1", n: 2 } })
  })

  it("treats empty arguments as {} without complaint", () => {
    assert.deepStrictEqual(parseToolArguments(""), { args: {} })
    assert.deepStrictEqual(parseToolArguments("  "), { args: {} })
    assert.deepStrictEqual(parseToolArguments(undefined), { args: {} })
  })

  it("reports malformed JSON with the parse error", () => {
    const parsed = parseToolArguments("{\"assetId\": ")
    assert.deepStrictEqual(parsed.args, {})
    assert.match(parsed.invalidArgs ?? "", /^arguments are not valid JSON: /)
  })

  it("reports JSON that is not an object", () => {
    assert.deepStrictEqual(parseToolArguments("[1,2]"), { args: {}, invalidArgs: "arguments must be a JSON object, got an array" })
    assert.deepStrictEqual(parseToolArguments("\"text\""), { args: {}, invalidArgs: "arguments must be a JSON object, got a string" })
    assert.deepStrictEqual(parseToolArguments("null"), { args: {}, invalidArgs: "arguments must be a JSON object, got null" })
    assert.deepStrictEqual(parseToolArguments("42"), { args: {}, invalidArgs: "arguments must be a JSON object, got a number" })
    assert.deepStrictEqual(parseToolArguments(7), { args: {}, invalidArgs: "arguments must be a JSON object, got a number" })
  })

  it("accepts an object sent instead of a JSON string (some compatible servers do)", () => {
    assert.deepStrictEqual(parseToolArguments({ a: 1 }), { args: { a: 1 } })
  })
})

describe("OpenAiWire: completions", () => {
  it("reads content and function tool calls", () => {
    const response = success(parseChatCompletion(completion({
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "call_a", type: "function", function: { name: "transcribe_video", arguments: "{\"assetId\":\"a1\"}" } },
        { id: "call_b", type: "function", function: { name: "transcribe_video", arguments: "{oops" } },
        { id: "call_c", type: "custom", custom: { name: "free", input: "x" } }
      ]
    })))
    assert.strictEqual(response.content, "")
    assert.strictEqual(response.toolCalls?.length, 2)
    assert.deepStrictEqual(response.toolCalls?.[0], { id: "call_a", name: "transcribe_video", args: { assetId: "a1" } })
    assert.strictEqual(response.toolCalls?.[1]?.id, "call_b")
    assert.deepStrictEqual(response.toolCalls?.[1]?.args, {})
    assert.isString(response.toolCalls?.[1]?.invalidArgs)
  })

  it("omits toolCalls when there are none", () => {
    const response = success(parseChatCompletion(completion({ role: "assistant", content: "Hello", tool_calls: [] })))
    assert.deepStrictEqual(response, { content: "Hello" })
  })

  it("derives an id for a tool call that has none", () => {
    const response = success(parseChatCompletion(completion({
      role: "assistant",
      content: "",
      tool_calls: [{ type: "function", function: { name: "t", arguments: "{}" } }]
    })))
    assert.deepStrictEqual(response.toolCalls, [{ id: "call_0", name: "t", args: {} }])
  })

  it("rejects bodies that are not completions as InvalidResponse", () => {
    for (const body of [
      null,
      "text",
      [1],
      {},
      { choices: [] },
      { choices: [{}] },
      { choices: [{ message: "hi" }] },
      completion({ content: 42 }),
      completion({ content: "x", tool_calls: {} }),
      completion({ content: "x", tool_calls: [{ type: "function", function: {} }] })
    ]) {
      assert.strictEqual(failure(parseChatCompletion(body)).reason, "InvalidResponse", JSON.stringify(body))
    }
  })

  it("reads the usage, the cached part of the prompt when reported; leaves out one that does not read", () => {
    const withUsage = (usage: unknown) => success(parseChatCompletion({ ...completion({ content: "x" }), usage })).usage
    assert.deepStrictEqual(withUsage({ prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 }), { inputTokens: 10, outputTokens: 3 })
    assert.deepStrictEqual(
      withUsage({ prompt_tokens: 10, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 8 } }),
      { inputTokens: 10, outputTokens: 3, cachedInputTokens: 8 }
    )
    for (const unreadable of [undefined, null, "lots", { prompt_tokens: 10 }, { prompt_tokens: -1, completion_tokens: 3 }, { prompt_tokens: 1.5, completion_tokens: 3 }]) {
      assert.isUndefined(withUsage(unreadable), JSON.stringify(unreadable))
    }
  })

  it("reads a transcription's text", () => {
    assert.strictEqual(success(parseTranscription({ text: "hello" })), "hello")
    assert.strictEqual(failure(parseTranscription({ txt: "hello" })).reason, "InvalidResponse")
  })
})

describe("OpenAiWire: streamed request", () => {
  it("is the same request, streamed, with the usage asked for", () => {
    const chatParams = params([user("hi")], [TranscribeVideo], "S")
    assert.deepStrictEqual(buildChatStreamRequest(chatParams, "m"), {
      ...buildChatRequest(chatParams, "m"),
      stream: true,
      stream_options: { include_usage: true }
    })
  })
})

describe("OpenAiWire: planner and sub-agent options", () => {
  const tool: ToolSchema = {
    name: "click",
    description: "Click at a point",
    parameters: [],
    inputSchema: { type: "object", properties: { x: { type: "integer" } }, required: ["x"] }
  }

  it("sends a tool's own JSON Schema as it is", () => {
    assert.deepStrictEqual(toWireTools([tool])[0]?.function.parameters, tool.inputSchema)
  })

  it("names the call's own model, asks for exactly one call, and shows images with the last user message", () => {
    const body = buildChatRequest({
      ...params([user("first"), assistant("ok"), user("what now?")], [tool], "SYS"),
      model: "vision-model",
      toolChoice: "required",
      images: [{ mediaType: "image/png", data: "iVBORw0KGgo=" }]
    }, "default-model")
    assert.strictEqual(body.model, "vision-model")
    assert.strictEqual(body.tool_choice, "required")
    assert.strictEqual(body.parallel_tool_calls, false)
    assert.deepStrictEqual(body.messages[1], { role: "user", content: "first" })
    assert.deepStrictEqual(body.messages[3], {
      role: "user",
      content: [
        { type: "text", text: "what now?" },
        { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } }
      ]
    })
  })

  it("leaves tool_choice out without tools, and the adapter's model in place by default", () => {
    const body = buildChatRequest({ ...params([user("hi")], [], ""), toolChoice: "required" }, "m")
    assert.strictEqual(body.model, "m")
    assert.isFalse("tool_choice" in body)
  })
})
