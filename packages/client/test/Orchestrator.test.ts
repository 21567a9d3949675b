import { TranscribeVideo } from "@switchboard/domain"
import type { ChatMessage, ExecutionStatus } from "@switchboard/domain"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { ChatTransportError } from "../src/chat/ChatTransport.ts"
import { iterationLimitMessage, makeOrchestrator, maxIterations } from "../src/chat/Orchestrator.ts"
import { makeDefaultRegistry } from "../src/tools/DefaultRegistry.ts"
import { ToolRegistry } from "../src/tools/ToolRegistry.ts"
import {
  answer,
  callTools,
  contextWithVideo,
  fakeTool,
  makeStores,
  recordingTranscriber,
  scriptedTransport
} from "./support/Fakes.ts"

/** Records every status the agent store goes through. */
const watchStatus = (stores: ReturnType<typeof makeStores>) => {
  const seen: Array<ExecutionStatus> = []
  stores.agentStore.subscribe((state, prev) => {
    if (state.status !== prev.status) seen.push(state.status)
  })
  return seen
}

const toolMessages = (messages: ReadonlyArray<ChatMessage>) => messages.filter((m) => m.role === "tool")

describe("Orchestrator", () => {
  it.effect("Happy path with no tool calls", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      stores.chatStore.getState().addMessage({ role: "user", content: "Hi" })
      const statuses = watchStatus(stores)
      const { layer, requests } = scriptedTransport([{ content: "Hello!", toolCalls: [], messageId: "srv_hello" }])
      const orchestrator = makeOrchestrator({ ...stores, registry: new ToolRegistry() })

      const result = yield* orchestrator.run().pipe(Effect.provide(layer))

      const messages = stores.chatStore.getState().messages
      assert.strictEqual(messages.length, 2)
      assert.strictEqual(messages[1]?.role, "assistant")
      assert.strictEqual(messages[1]?.content, "Hello!")
      // the server's id is reused, so the persisted transcript has no duplicate
      assert.strictEqual(messages[1]?.id, "srv_hello")
      assert.strictEqual(stores.agentStore.getState().status, "idle")
      assert.isFalse(stores.chatStore.getState().loading)
      assert.deepStrictEqual(statuses, ["sending", "responding", "idle"])
      assert.strictEqual(result._tag, "Answered")
      assert.strictEqual(result.message.content, "Hello!")
      // one request: the history and the conversation id
      assert.strictEqual(requests.length, 1)
      assert.deepStrictEqual(requests[0]?.messages.map((m) => m.content), ["Hi"])
      assert.strictEqual(requests[0]?.chatId, stores.chatStore.getState().chatId)
      assert.isUndefined(requests[0]?.context)
    }))

  it.effect("Whole answers (streaming off): a tool round with text is responding before its tool runs", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      stores.agentStore.getState().setContext(contextWithVideo().context)
      stores.chatStore.getState().addMessage({ role: "user", content: "Transcribe my clip" })
      const statuses = watchStatus(stores)
      const { layer } = scriptedTransport([
        { ...callTools({ id: "call_1", name: "transcribe_video", args: {} }), content: "Let me listen." },
        { content: "Done.", toolCalls: [], messageId: "srv_final" }
      ])
      const orchestrator = makeOrchestrator({
        ...stores,
        registry: makeDefaultRegistry(recordingTranscriber("words").transcriber),
        streaming: false
      })

      yield* orchestrator.run().pipe(Effect.provide(layer))

      assert.deepStrictEqual(statuses, ["sending", "responding", "processing", "sending", "responding", "idle"])
      assert.deepStrictEqual(stores.chatStore.getState().messages.map((m) => m.content).slice(1, 2), ["Let me listen."])
    }))

  it.effect("Tool call then final answer", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      const { bytes, context } = contextWithVideo()
      stores.agentStore.getState().setContext(context)
      stores.chatStore.getState().addMessage({ role: "user", content: "Transcribe my clip" })
      const statuses = watchStatus(stores)
      const activeTools: Array<string | null> = []
      stores.agentStore.subscribe((s, p) => {
        if (s.activeTool !== p.activeTool) activeTools.push(s.activeTool)
      })
      const { transcriber, uploads } = recordingTranscriber("Hello from the video")
      const { layer, requests } = scriptedTransport([
        callTools({ id: "call_1", name: "transcribe_video", args: {} }),
        { content: "Here is the transcription...", toolCalls: [], messageId: "srv_final" }
      ])
      const orchestrator = makeOrchestrator({ ...stores, registry: makeDefaultRegistry(transcriber) })

      const result = yield* orchestrator.run().pipe(Effect.provide(layer))

      const messages = stores.chatStore.getState().messages
      assert.deepStrictEqual(messages.map((m) => m.role), ["user", "assistant", "tool", "assistant"])
      assert.deepStrictEqual(messages[1]?.toolCalls, [{ id: "call_1", name: "transcribe_video", args: {} }])
      assert.deepStrictEqual(messages[2]?.toolResult, {
        toolCallId: "call_1",
        name: "transcribe_video",
        result: { text: "Hello from the video" }
      })
      assert.include(messages[2]?.content, "Hello from the video")
      assert.strictEqual(messages[3]?.content, "Here is the transcription...")
      assert.strictEqual(messages[3]?.id, "srv_final")
      assert.strictEqual(result._tag, "Answered")
      assert.strictEqual(stores.agentStore.getState().status, "idle")
      assert.isNull(stores.agentStore.getState().activeTool)
      assert.deepStrictEqual(statuses, ["sending", "processing", "sending", "responding", "idle"])
      assert.deepStrictEqual(activeTools, ["transcribe_video", null])
      // the tool really ran on the context's asset
      assert.strictEqual(uploads.length, 1)
      assert.deepStrictEqual([...(uploads[0]?.data ?? [])], [...bytes])
      // the second request carries the grown history and the context
      assert.strictEqual(requests.length, 2)
      assert.deepStrictEqual(requests[1]?.messages.map((m) => m.role), ["user", "assistant", "tool"])
      assert.deepStrictEqual(requests[1]?.context, context)
    }))

  it.effect("Error during tool execution — per-tool recovery", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      stores.chatStore.getState().addMessage({ role: "user", content: "Transcribe" })
      const throwing = new ToolRegistry().register({
        ...TranscribeVideo,
        execute: () => {
          throw new Error("decoder crashed")
        }
      })
      const { layer, requests } = scriptedTransport([
        callTools({ id: "call_1", name: "transcribe_video", args: {} }),
        answer("Sorry, the transcription failed.")
      ])
      const orchestrator = makeOrchestrator({ ...stores, registry: throwing })

      const result = yield* orchestrator.run().pipe(Effect.provide(layer))

      // the error became a ToolResult in the history sent back to the model
      const sentBack = toolMessages(requests[1]?.messages ?? [])
      assert.strictEqual(sentBack.length, 1)
      assert.deepStrictEqual(sentBack[0]?.toolResult, {
        toolCallId: "call_1",
        name: "transcribe_video",
        error: "decoder crashed"
      })
      assert.include(sentBack[0]?.content, "decoder crashed")
      // and the loop went on to the final answer
      assert.strictEqual(result._tag, "Answered")
      assert.strictEqual(stores.chatStore.getState().messages.at(-1)?.content, "Sorry, the transcription failed.")
      assert.strictEqual(stores.agentStore.getState().status, "idle")
      assert.isNull(stores.chatStore.getState().error)
    }))

  it.effect("a tool that fails, one that dies, and one that works: each gets its own result", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      stores.chatStore.getState().addMessage({ role: "user", content: "go" })
      const failing = fakeTool("failing", [], () => Effect.fail(new Error("no such asset")))
      const dying = fakeTool("dying", [], () => Effect.sync(() => JSON.parse("{")))
      const working = fakeTool("working", [], () => Effect.succeed({ ok: true }))
      const registry = new ToolRegistry().register(failing.tool).register(dying.tool).register(working.tool)
      const { layer, requests } = scriptedTransport([
        callTools(
          { id: "c1", name: "failing", args: {} },
          { id: "c2", name: "dying", args: {} },
          { id: "c3", name: "working", args: {} }
        ),
        answer("done")
      ])

      yield* makeOrchestrator({ ...stores, registry }).run().pipe(Effect.provide(layer))

      const results = toolMessages(requests[1]?.messages ?? []).map((m) => m.toolResult)
      assert.deepStrictEqual(results.map((r) => r?.toolCallId), ["c1", "c2", "c3"])
      assert.strictEqual(results[0]?.error, "no such asset")
      assert.isString(results[1]?.error)
      assert.include(results[1]?.error, "JSON")
      assert.deepStrictEqual(results[2], { toolCallId: "c3", name: "working", result: { ok: true } })
    }))

  it.effect("Missing required argument", () =>
    Effect.gen(function*() {
      // transcribe_video declares no required parameter: `{}` passes validation and the tool runs
      assert.isTrue(TranscribeVideo.parameters.every((p) => !p.required))
      const stores = makeStores()
      const { context } = contextWithVideo()
      stores.agentStore.getState().setContext(context)
      stores.chatStore.getState().addMessage({ role: "user", content: "Transcribe" })
      const { transcriber, uploads } = recordingTranscriber("transcript")
      const { layer, requests } = scriptedTransport([
        callTools({ id: "call_1", name: "transcribe_video", args: {} }),
        answer("ok")
      ])

      yield* makeOrchestrator({ ...stores, registry: makeDefaultRegistry(transcriber) }).run().pipe(Effect.provide(layer))

      assert.strictEqual(uploads.length, 1)
      const [result] = toolMessages(requests[1]?.messages ?? []).map((m) => m.toolResult)
      assert.isUndefined(result?.error)
      assert.deepStrictEqual(result?.result, { text: "transcript" })
    }))

  it.effect("a declared required argument that is missing stops the tool", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      stores.chatStore.getState().addMessage({ role: "user", content: "go" })
      const strict = fakeTool("strict", [{ key: "assetId", type: "string", required: true }])
      const { layer, requests } = scriptedTransport([callTools({ id: "c1", name: "strict", args: {} }), answer("ok")])

      yield* makeOrchestrator({ ...stores, registry: new ToolRegistry().register(strict.tool) }).run().pipe(
        Effect.provide(layer)
      )

      assert.strictEqual(strict.calls.length, 0)
      const [result] = toolMessages(requests[1]?.messages ?? []).map((m) => m.toolResult)
      assert.strictEqual(result?.error, `Missing required argument "assetId" (string)`)
    }))

  it.effect("Wrong argument type", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      stores.chatStore.getState().addMessage({ role: "user", content: "go" })
      const strict = fakeTool("transcribe_strict", [{ key: "assetId", type: "string", required: true }])
      const registry = new ToolRegistry().register(strict.tool)
      const { layer, requests } = scriptedTransport([
        callTools({ id: "c1", name: "transcribe_strict", args: { assetId: 123 } }),
        answer("ok")
      ])

      yield* makeOrchestrator({ ...stores, registry }).run().pipe(Effect.provide(layer))

      assert.strictEqual(strict.calls.length, 0, "the tool must not execute")
      const [result] = toolMessages(requests[1]?.messages ?? []).map((m) => m.toolResult)
      assert.include(result?.error, "assetId")
      assert.strictEqual(result?.error, `Invalid argument "assetId": expected string, got number`)
      assert.strictEqual(result?.toolCallId, "c1")
    }))

  it.effect("present optional arguments are type-checked; invalidArgs and unknown tools fail validation", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      stores.chatStore.getState().addMessage({ role: "user", content: "go" })
      const typed = fakeTool("typed", [
        { key: "count", type: "integer", required: false },
        { key: "opts", type: "object", required: false },
        { key: "tags", type: "array", required: false },
        { key: "mode", type: "string", required: false, enum: ["fast", "slow"] },
        { key: "note", type: "string", required: false }
      ])
      const registry = new ToolRegistry().register(typed.tool)
      const { layer, requests } = scriptedTransport([
        callTools(
          { id: "c1", name: "typed", args: { count: 1.5 } },
          { id: "c2", name: "typed", args: { opts: [] } },
          { id: "c3", name: "typed", args: { tags: "a,b" } },
          { id: "c4", name: "typed", args: { mode: "turbo" } },
          { id: "c5", name: "typed", args: {}, invalidArgs: "not json" },
          { id: "c6", name: "echo_context", args: {} },
          { id: "c7", name: "typed", args: { count: 2, opts: { a: 1 }, tags: [], mode: "fast", note: null } }
        ),
        answer("ok")
      ])

      yield* makeOrchestrator({ ...stores, registry }).run().pipe(Effect.provide(layer))

      const errors = toolMessages(requests[1]?.messages ?? []).map((m) => m.toolResult?.error)
      assert.deepStrictEqual(errors, [
        `Invalid argument "count": expected integer, got number`,
        `Invalid argument "opts": expected object, got array`,
        `Invalid argument "tags": expected array, got string`,
        `Invalid argument "mode": expected one of "fast", "slow", got "turbo"`,
        `Invalid arguments for "typed": expected a JSON object, got not json`,
        `Unknown tool "echo_context"`,
        undefined
      ])
      // only the valid call ran, and a null optional argument reads as absent
      assert.deepStrictEqual(typed.calls, [{ count: 2, opts: { a: 1 }, tags: [], mode: "fast" }])
    }))

  it.effect("Cap reached mid-loop", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      stores.chatStore.getState().addMessage({ role: "user", content: "loop forever" })
      const looping = fakeTool("again", [])
      const script = Array.from({ length: maxIterations }, (_, i) => callTools({ id: `c${i + 1}`, name: "again", args: {} }))
      const { layer, requests } = scriptedTransport(script)

      const result = yield* makeOrchestrator({ ...stores, registry: new ToolRegistry().register(looping.tool) }).run()
        .pipe(Effect.provide(layer))

      assert.strictEqual(maxIterations, 8)
      assert.strictEqual(requests.length, 8)
      // iterations 1..7 executed their calls; the 8th's were not executed
      assert.strictEqual(looping.calls.length, 7)
      const messages = stores.chatStore.getState().messages
      const last = messages.at(-1)
      assert.strictEqual(last?.role, "assistant")
      assert.strictEqual(last?.content, "Reached maximum iteration limit")
      assert.strictEqual(last?.content, iterationLimitMessage)
      assert.isUndefined(last?.toolCalls)
      assert.isFalse(messages.some((m) => m.toolCalls?.some((c) => c.id === "c8")))
      assert.strictEqual(result._tag, "IterationLimit")
      assert.strictEqual(result.iterations, 8)
      assert.strictEqual(stores.agentStore.getState().status, "idle")
      assert.isNull(stores.agentStore.getState().activeTool)
      assert.isFalse(stores.chatStore.getState().loading)
    }))

  it.effect("Loop completes within cap", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      stores.chatStore.getState().addMessage({ role: "user", content: "two steps" })
      const step = fakeTool("step", [])
      const { layer, requests } = scriptedTransport([
        callTools({ name: "step", args: {} }),
        callTools({ name: "step", args: {} }),
        answer("finished")
      ])

      const result = yield* makeOrchestrator({ ...stores, registry: new ToolRegistry().register(step.tool) }).run()
        .pipe(Effect.provide(layer))

      assert.strictEqual(requests.length, 3)
      assert.strictEqual(step.calls.length, 2)
      const messages = stores.chatStore.getState().messages
      assert.isFalse(messages.some((m) => m.content === iterationLimitMessage))
      assert.strictEqual(messages.at(-1)?.content, "finished")
      assert.strictEqual(result._tag, "Answered")
      assert.strictEqual(result.iterations, 3)
      assert.strictEqual(stores.agentStore.getState().status, "idle")
    }))

  it.effect("an API error sets chatStore.error and status error, and fails the run", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      stores.chatStore.getState().addMessage({ role: "user", content: "Hi" })
      const statuses = watchStatus(stores)
      const apiError = new ChatTransportError({ message: "LLM provider error (provider_error)", status: 502, code: "provider_error" })
      const { layer } = scriptedTransport([apiError])

      const error = yield* makeOrchestrator({ ...stores, registry: new ToolRegistry() }).run().pipe(
        Effect.provide(layer),
        Effect.flip
      )

      assert.strictEqual(error, apiError)
      assert.strictEqual(stores.chatStore.getState().error, "LLM provider error (provider_error)")
      assert.isFalse(stores.chatStore.getState().loading)
      assert.strictEqual(stores.agentStore.getState().status, "error")
      assert.deepStrictEqual(statuses, ["sending", "error"])
      // nothing was appended for the failed turn
      assert.strictEqual(stores.chatStore.getState().messages.length, 1)
    }))

  it.effect("an API error after a tool round keeps the tool messages and clears the active tool", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      stores.chatStore.getState().addMessage({ role: "user", content: "Hi" })
      const step = fakeTool("step", [])
      const { layer } = scriptedTransport([
        callTools({ name: "step", args: {} }),
        new ChatTransportError({ message: "cannot reach the server" })
      ])
      yield* makeOrchestrator({ ...stores, registry: new ToolRegistry().register(step.tool) }).run().pipe(
        Effect.provide(layer),
        Effect.flip
      )
      assert.deepStrictEqual(stores.chatStore.getState().messages.map((m) => m.role), ["user", "assistant", "tool"])
      assert.strictEqual(stores.agentStore.getState().status, "error")
      assert.isNull(stores.agentStore.getState().activeTool)
    }))

  it.effect("loading is true while the turn runs; a new run clears the previous error", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      stores.chatStore.getState().setError("old failure")
      let loadingDuringCall: boolean | undefined
      let errorDuringCall: string | null | undefined
      const { layer } = scriptedTransport([() => {
        loadingDuringCall = stores.chatStore.getState().loading
        errorDuringCall = stores.chatStore.getState().error
        return answer("hi")
      }])
      yield* makeOrchestrator({ ...stores, registry: new ToolRegistry() }).send("Hello").pipe(Effect.provide(layer))
      assert.isTrue(loadingDuringCall)
      assert.isNull(errorDuringCall)
      assert.isFalse(stores.chatStore.getState().loading)
      assert.deepStrictEqual(stores.chatStore.getState().messages.map((m) => [m.role, m.content]), [
        ["user", "Hello"],
        ["assistant", "hi"]
      ])
    }))

  it.effect("run(messages, context) uses the given history and context", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      const { context } = contextWithVideo()
      const given: ReadonlyArray<ChatMessage> = [{ id: "u1", role: "user", content: "explicit", timestamp: 1 }]
      const { layer, requests } = scriptedTransport([answer("ok")])
      yield* makeOrchestrator({ ...stores, registry: new ToolRegistry() }).run(given, context).pipe(Effect.provide(layer))
      assert.deepStrictEqual(requests[0]?.messages, given)
      assert.deepStrictEqual(requests[0]?.context, context)
    }))

  it.effect("a history ending with unanswered calls (a wake answer found by a re-sync) is resumed: the calls run first", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      const { context } = contextWithVideo()
      stores.agentStore.getState().setContext(context)
      stores.chatStore.getState().addMessage({ role: "user", content: "research it" })
      stores.chatStore.getState().addMessage({
        id: "srv_wake",
        role: "assistant",
        content: "let me check the video",
        toolCalls: [{ id: "call_w", name: "transcribe_video", args: {} }]
      })
      const { transcriber, uploads } = recordingTranscriber("words")
      const { layer, requests } = scriptedTransport([{ content: "done", toolCalls: [], messageId: "srv_done", jobs: [] }])
      const orchestrator = makeOrchestrator({ ...stores, registry: makeDefaultRegistry(transcriber) })

      const result = yield* orchestrator.run().pipe(Effect.provide(layer))

      assert.strictEqual(uploads.length, 1, "the pending call was executed")
      assert.deepStrictEqual(requests[0]?.messages.map((m) => m.role), ["user", "assistant", "tool"])
      assert.strictEqual(requests[0]?.messages[2]?.toolResult?.toolCallId, "call_w")
      assert.strictEqual(result.message.content, "done")
      assert.deepStrictEqual(result.jobs, [])
    }))
})
