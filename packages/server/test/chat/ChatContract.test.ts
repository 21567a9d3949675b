/**
 * The chat route of docs/chat.md as an independent client sees it: plain
 * HTTP against the real server, whose openai-compatible adapter (configured
 * only through LLM_* variables) talks to a local OpenAI-compatible server.
 */
import { assert, describe, layer } from "@effect/vitest"
import type { ChatMessage } from "@switchboard/domain"
import { Cause, Effect, Layer, Logger } from "effect"
import * as ProviderConfig from "@switchboard/providers"
import { anthropicReply, FakeAnthropicServer, FakeOpenAiServer, openAiReply as reply } from "@switchboard/providers/testing"
import { layerTestServer, postJson, request } from "../support/TestServer.ts"

const API_KEY = "sk-live-secret-4f1c9a"
const logs: Array<string> = []
const CaptureLogs = Logger.layer([Logger.make((o) => {
  logs.push(`${JSON.stringify(o.message)} ${Cause.pretty(o.cause)}`)
})])

const withServer = (env: Record<string, string>) =>
  Layer.unwrap(Effect.gen(function*() {
    const fake = yield* FakeOpenAiServer
    return layerTestServer(ProviderConfig.layer, {
      LLM_PROVIDER: "openai-compatible",
      LLM_MODEL: "gpt-contract",
      LLM_API_KEY: API_KEY,
      LLM_BASE_URL: fake.url,
      LLM_TIMEOUT_MS: "500",
      ...env
    })
  })).pipe(Layer.provideMerge(FakeOpenAiServer.layer()), Layer.provide(CaptureLogs))

const user = (id: string, content: string): ChatMessage => ({ id, role: "user", content, timestamp: 1 })
const context = {
  projectId: "proj-7",
  activeSceneId: null,
  mediaAssets: [{ id: "clip-1", name: "Keynote.mp4", kind: "video", uri: "file:///media/keynote.mp4" }],
  playbackTimeMs: 0
}

for (const transport of ["undici", "sdk"] as const) {
  describe(`chat contract, openai-compatible over ${transport}`, () => {
    layer(withServer({ LLM_TRANSPORT: transport }), { excludeTestServices: true })("independent client", (it) => {
      it.effect("a tool loop: tool call to the client, tool result back to the provider, final answer", () =>
        Effect.gen(function*() {
          const fake = yield* FakeOpenAiServer
          fake.reset()
          fake.enqueue(reply.toolCalls([{ id: "call_abc", name: "transcribe_video", arguments: "{\"assetId\":\"clip-1\"}" }]))
          const first = yield* postJson("/api/agent/chat", {
            chatId: `loop-${transport}`,
            context,
            messages: [{
              ...user("u1", "Transcribe the keynote"),
              parts: [{ type: "text", text: "Transcribe the keynote" }, { type: "data-ui-card", data: { secretUiOnly: "do-not-send" } }],
              metadata: { ui: "metadata-not-for-provider" }
            }]
          })
          assert.strictEqual(first.status, 200)
          assert.deepStrictEqual(first.json.toolCalls, [{ id: "call_abc", name: "transcribe_video", args: { assetId: "clip-1" } }])

          const wire = fake.chatRequests()[0]!
          const body = wire.body as any
          assert.strictEqual(wire.headers.authorization, `Bearer ${API_KEY}`)
          assert.strictEqual(body.model, "gpt-contract")
          assert.strictEqual(body.messages[0].role, "system")
          assert.include(body.messages[0].content, "Keynote.mp4")
          assert.deepStrictEqual(body.messages[1], { role: "user", content: "Transcribe the keynote" })
          assert.notInclude(wire.rawBody.toString(), "do-not-send", "data parts never reach the provider")
          assert.notInclude(wire.rawBody.toString(), "metadata-not-for-provider", "metadata never reaches the provider")
          const tool = body.tools.find((t: any) => t.function.name === "transcribe_video")
          assert.strictEqual(tool.type, "function")
          assert.strictEqual(tool.function.parameters.type, "object")
          assert.strictEqual(tool.function.parameters.properties.assetId.type, "string")

          fake.enqueue(reply.text("The keynote says: hello world."))
          const second = yield* postJson("/api/agent/chat", {
            chatId: `loop-${transport}`,
            context,
            messages: [
              user("u1", "Transcribe the keynote"),
              { id: first.json.messageId, role: "assistant", content: "", toolCalls: first.json.toolCalls, timestamp: 2 },
              {
                id: "t1", role: "tool", content: "hello world", timestamp: 3,
                toolResult: { toolCallId: "call_abc", name: "transcribe_video", result: { text: "hello world" } }
              }
            ]
          })
          assert.strictEqual(second.status, 200)
          assert.strictEqual(second.json.content, "The keynote says: hello world.")
          assert.isTrue(second.json.toolCalls === undefined || second.json.toolCalls.length === 0)

          const followUp = fake.chatRequests()[1]!.body as any
          const assistant = followUp.messages.find((m: any) => m.role === "assistant")
          assert.strictEqual(assistant.tool_calls[0].id, "call_abc")
          assert.strictEqual(assistant.tool_calls[0].function.name, "transcribe_video")
          const toolMessage = followUp.messages.find((m: any) => m.role === "tool")
          assert.strictEqual(toolMessage.tool_call_id, "call_abc")
          assert.include(toolMessage.content, "hello world")

          const transcript = yield* request(`/api/chats/loop-${transport}/messages`)
          assert.deepStrictEqual(
            transcript.json.messages.map((m: ChatMessage) => m.role),
            ["user", "assistant", "tool", "assistant"]
          )
          assert.strictEqual(transcript.json.messages[0].parts[1].data.secretUiOnly, "do-not-send", "the transcript keeps the UI parts")
        }))

      it.effect("arguments that are not JSON reach the client as invalidArgs", () =>
        Effect.gen(function*() {
          const fake = yield* FakeOpenAiServer
          fake.reset()
          fake.enqueue(reply.toolCalls([{ id: "call_bad", name: "transcribe_video", arguments: "{\"assetId\": " }]))
          const res = yield* postJson("/api/agent/chat", { messages: [user("u1", "go")] })
          assert.strictEqual(res.status, 200)
          const [call] = res.json.toolCalls
          assert.strictEqual(call.id, "call_bad")
          assert.deepStrictEqual(call.args, {})
          assert.isString(call.invalidArgs)
        }))

      it.effect("provider failures are 502 provider_error with a reason, never the key nor the provider's words", () =>
        Effect.gen(function*() {
          const fake = yield* FakeOpenAiServer
          fake.reset()
          logs.length = 0
          const cases = [
            [reply.status(401, `Incorrect API key provided: ${API_KEY}`), "status_401", "Incorrect API key"],
            [reply.status(500, "upstream exploded"), "status_500", "upstream exploded"],
            [reply.status(429, "slow down"), "status_429", "slow down"],
            [reply.garbage(), "invalid_response", "definitely not json"],
            [reply.hang(), "timeout", undefined],
            [reply.destroy(), "connection_reset", undefined]
          ] as const
          fake.enqueue(...cases.map(([answer]) => answer))
          for (const [i, [, reason, providerText]] of cases.entries()) {
            const res = yield* postJson("/api/agent/chat", { messages: [user("u1", `attempt ${i}`)] })
            assert.strictEqual(res.status, 502, `attempt ${i}`)
            assert.deepStrictEqual(res.json, { error: "LLM provider error", code: "provider_error", reason })
            assert.notInclude(res.text, API_KEY)
            if (providerText !== undefined) assert.notInclude(res.text, providerText)
          }
          assert.isAbove(logs.length, 0, "failures are logged server-side")
          for (const line of logs) assert.notInclude(line, API_KEY)
        }))

      it.effect("transcriptions go to the provider's transcription endpoint with the server's key", () =>
        Effect.gen(function*() {
          const fake = yield* FakeOpenAiServer
          fake.reset()
          const form = new FormData()
          form.append("file", new Blob([new Uint8Array(2048)], { type: "video/mp4" }), "keynote.mp4")
          form.append("language", "en")
          const res = yield* request("/api/media/transcriptions", { method: "POST", body: form })
          assert.strictEqual(res.status, 200)
          assert.strictEqual(res.json.text, "fake transcription of keynote.mp4 (2048 bytes)")
          const upload = fake.transcriptionRequests()[0]!
          assert.strictEqual(upload.headers.authorization, `Bearer ${API_KEY}`)
          assert.strictEqual(upload.upload?.fields.model, "whisper-1")
          assert.strictEqual(upload.upload?.fields.language, "en")
          assert.strictEqual(upload.upload?.size, 2048)
        }))
    })
  })
}

describe("chat contract without provider configuration", () => {
  layer(
    layerTestServer(ProviderConfig.layer, { LLM_PROVIDER: "openai-compatible", LLM_MODEL: "m" }),
    { excludeTestServices: true }
  )("server started without LLM_API_KEY", (it) => {
    it.effect("Missing required configuration", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* request("/healthz")).status, 200, "the server starts anyway")
        const res = yield* postJson("/api/agent/chat", { messages: [user("u1", "hi")] })
        assert.strictEqual(res.status, 502)
        assert.deepStrictEqual(res.json, {
          error: "LLM provider not configured: missing LLM_API_KEY",
          code: "provider_not_configured",
          missing: ["LLM_API_KEY"]
        })
      }))
  })
})

describe("chat contract, anthropic provider", () => {
  const withAnthropic = Layer.unwrap(Effect.gen(function*() {
    const fake = yield* FakeAnthropicServer
    return layerTestServer(ProviderConfig.layer, {
      LLM_PROVIDER: "anthropic",
      LLM_MODEL: "claude-contract",
      LLM_API_KEY: API_KEY,
      LLM_BASE_URL: fake.url,
      LLM_TIMEOUT_MS: "500"
    })
  })).pipe(Layer.provideMerge(FakeAnthropicServer.layer()))

  layer(withAnthropic, { excludeTestServices: true })("independent client", (it) => {
    it.effect("the same tool loop through the Messages API", () =>
      Effect.gen(function*() {
        const fake = yield* FakeAnthropicServer
        fake.enqueue(anthropicReply.toolUse([{ id: "toolu_1", name: "transcribe_video", input: { assetId: "clip-1" } }]))
        const first = yield* postJson("/api/agent/chat", { chatId: "anthropic-loop", context, messages: [user("u1", "Transcribe it")] })
        assert.strictEqual(first.status, 200)
        assert.deepStrictEqual(first.json.toolCalls, [{ id: "toolu_1", name: "transcribe_video", args: { assetId: "clip-1" } }])
        const wire = fake.messageRequests()[0]!
        assert.strictEqual(wire.headers["x-api-key"], API_KEY)
        assert.include((wire.body as any).system, "Keynote.mp4")

        fake.enqueue(anthropicReply.text("It says hello."))
        const second = yield* postJson("/api/agent/chat", {
          chatId: "anthropic-loop",
          context,
          messages: [
            user("u1", "Transcribe it"),
            { id: first.json.messageId, role: "assistant", content: "", toolCalls: first.json.toolCalls, timestamp: 2 },
            { id: "t1", role: "tool", content: "hello", timestamp: 3, toolResult: { toolCallId: "toolu_1", name: "transcribe_video", result: { text: "hello" } } }
          ]
        })
        assert.strictEqual(second.status, 200, second.text)
        assert.strictEqual(second.json.content, "It says hello.")
        const followUp = (fake.messageRequests()[1]!.body as any).messages
        assert.deepStrictEqual(followUp.at(-1).content[0].tool_use_id, "toolu_1")

        fake.enqueue(anthropicReply.status(529, "overloaded"))
        const overloaded = yield* postJson("/api/agent/chat", { messages: [user("u1", "hi")] })
        assert.strictEqual(overloaded.status, 502)
        assert.strictEqual(overloaded.json.code, "provider_error")
      }))
  })
})
