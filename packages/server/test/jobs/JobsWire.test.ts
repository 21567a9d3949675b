/**
 * Job turns through the real provider adapters, over HTTP to local fakes of
 * both APIs: a response mixing a job call and a client call, the client's
 * continuation, then the wake turn — every request a valid provider
 * conversation (`FakeAnthropic` refuses any that breaks the Messages API's
 * tool_use/tool_result rules), and no data part ever on the wire.
 */
import { assert, describe, layer } from "@effect/vitest"
import type { ChatMessage } from "@switchboard/domain"
import { Effect, Layer } from "effect"
import * as ProviderConfig from "@switchboard/providers"
import { anthropicReply, FakeAnthropicServer, FakeOpenAiServer, openAiReply } from "@switchboard/providers/testing"
import type { RecordedRequest } from "@switchboard/providers/testing"
import { makeFakeSubagents, researchResult } from "../support/FakeSubagents.ts"
import { chat, settled, transcriptOf, user } from "../support/JobsHelpers.ts"
import { layerTestServer } from "../support/TestServer.ts"

const subagents = makeFakeSubagents()

/** The text of the last message of a request body, whatever the API. */
const lastOf = (request: RecordedRequest): { role: string; text: string; toolResult: boolean } => {
  const messages = (request.body as { messages: Array<{ role: string; content: unknown }> }).messages
  const last = messages.at(-1)!
  if (typeof last.content === "string") return { role: last.role, text: last.content, toolResult: last.role === "tool" }
  const blocks = (last.content ?? []) as Array<{ type: string; text?: string }>
  return {
    role: last.role,
    text: blocks.filter((b) => b.type === "text").map((b) => b.text).join(""),
    toolResult: blocks.some((b) => b.type === "tool_result")
  }
}

const scenario = (respond: (kind: "mixed" | "after-tool" | "wake") => ReturnType<typeof openAiReply.text>) =>
  (request: RecordedRequest) => {
    const last = lastOf(request)
    if (last.toolResult) return respond("after-tool")
    if (last.text.startsWith("Research complete")) return respond("wake")
    return respond("mixed")
  }

const env = (provider: string, url: string) => ({
  LLM_PROVIDER: provider,
  LLM_MODEL: "wire-model",
  LLM_API_KEY: "sk-wire",
  LLM_BASE_URL: url
})

const openAiServer = Layer.unwrap(Effect.gen(function*() {
  const fake = yield* FakeOpenAiServer
  fake.respondWith(scenario((kind) =>
    kind === "mixed"
      ? openAiReply.toolCalls([
        { id: "call_job", name: "research", arguments: "{\"question\":\"sigma.js\"}" },
        { id: "call_client", name: "transcribe_video", arguments: "{}" }
      ], "on it")
      : openAiReply.text(kind === "wake" ? "the brief says WebGL" : "noted")
  ))
  return layerTestServer(ProviderConfig.layer, env("openai-compatible", fake.url), { subagents: subagents.layer })
})).pipe(Layer.provideMerge(FakeOpenAiServer.layer()))

const anthropicServer = Layer.unwrap(Effect.gen(function*() {
  const fake = yield* FakeAnthropicServer
  fake.respondWith(scenario((kind) =>
    kind === "mixed"
      ? anthropicReply.toolUse([
        { id: "toolu_job", name: "research", input: { question: "sigma.js" } },
        { id: "toolu_client", name: "transcribe_video", input: {} }
      ], "on it")
      : anthropicReply.text(kind === "wake" ? "the brief says WebGL" : "noted")
  ))
  return layerTestServer(ProviderConfig.layer, env("anthropic", fake.url), { subagents: subagents.layer })
})).pipe(Layer.provideMerge(FakeAnthropicServer.layer()))

const flow = (chatId: string, requests: () => ReadonlyArray<RecordedRequest>) =>
  Effect.gen(function*() {
    const first = yield* chat(chatId, [user("u1", "research sigma.js and transcribe the intro")])
    assert.strictEqual(first.status, 200, first.text)
    assert.strictEqual(first.json.toolCalls.length, 1)
    const call = first.json.toolCalls[0]
    assert.strictEqual(call.name, "transcribe_video")
    const jobId = first.json.jobs[0].id as string

    const history: Array<ChatMessage> = [
      user("u1", "research sigma.js and transcribe the intro"),
      { id: first.json.messageId, role: "assistant", content: first.json.content, toolCalls: [call], timestamp: 2 },
      { id: "t1", role: "tool", content: "hi", toolResult: { toolCallId: call.id, name: "transcribe_video", result: { text: "hi" } }, timestamp: 3 }
    ]
    const second = yield* chat(chatId, history)
    assert.strictEqual(second.status, 200, `the continuation is a valid conversation: ${second.text}`)
    assert.strictEqual(second.json.content, "noted")

    yield* subagents.finish(jobId, researchResult("Sigma.js v3 uses WebGL."))
    const [job] = yield* settled(chatId)
    assert.strictEqual(job!.status, "done")
    const transcript = yield* transcriptOf(chatId)
    assert.strictEqual(transcript.at(-1)!.content, "the brief says WebGL")

    const wake = requests().at(-1)!
    assert.strictEqual(wake.aborted, false)
    const wire = wake.rawBody.toString("utf8")
    assert.include(wire, "Sigma.js v3 uses WebGL.", "the model sees the steer's text")
    assert.notInclude(wire, "data-subagent-artifact", "data parts never reach a provider")
    assert.notInclude(wire, "example.org/source", "the artifact (sources) is not in the model's context")
    assert.notInclude(wire, "subagentResult", "metadata never reaches a provider")
    assert.strictEqual(requests().length, 3, "mixed answer (no extra round: the client calls end it), continuation, wake")
  })

describe("job turns over the provider wire", () => {
  layer(openAiServer, { excludeTestServices: true })("openai-compatible", (it) => {
    it.effect("mixed job and client calls, the continuation and the wake are valid Chat Completions conversations", () =>
      Effect.gen(function*() {
        const fake = yield* FakeOpenAiServer
        yield* flow("wire-openai", () => fake.chatRequests())
        const continuation = fake.chatRequests()[1]!.body as { messages: Array<{ role: string; tool_call_id?: string; tool_calls?: Array<{ id: string }> }> }
        const roles = continuation.messages.map((m) => m.role)
        assert.deepStrictEqual(roles, ["system", "user", "assistant", "tool", "tool"])
        assert.deepStrictEqual(continuation.messages[2]!.tool_calls!.map((c) => c.id), ["call_job", "call_client"])
        assert.deepStrictEqual(continuation.messages.slice(3).map((m) => m.tool_call_id), ["call_job", "call_client"])
      }))
  })

  layer(anthropicServer, { excludeTestServices: true })("anthropic", (it) => {
    it.effect("mixed job and client calls, the continuation and the wake pass the Messages API's rules", () =>
      Effect.gen(function*() {
        const fake = yield* FakeAnthropicServer
        yield* flow("wire-anthropic", () => fake.messageRequests())
        const continuation = fake.messageRequests()[1]!.body as { messages: Array<{ role: string; content: unknown }> }
        const results = (continuation.messages.at(-1)!.content as Array<{ type: string; tool_use_id: string }>)
        assert.deepStrictEqual(results.map((b) => [b.type, b.tool_use_id]), [["tool_result", "toolu_job"], ["tool_result", "toolu_client"]])
      }))
  })
})
