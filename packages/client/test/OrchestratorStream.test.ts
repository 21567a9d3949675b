/**
 * The orchestrator over streamed answers, against a local fake of the
 * server's event stream: what the stores show while an answer streams, the
 * tool loop and its cap over streams, stopping, aborting, an error chunk.
 */
import type { ChatMessage, ChatRequest, ExecutionStatus } from "@switchboard/domain"
import { SSE_DONE, sseEvent } from "@switchboard/domain"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { ChatTransport } from "../src/chat/ChatTransport.ts"
import { iterationLimitMessage, makeOrchestrator, maxIterations, notRunWhenStopped } from "../src/chat/Orchestrator.ts"
import type { OrchestratorDeps } from "../src/chat/Orchestrator.ts"
import { ToolRegistry } from "../src/tools/ToolRegistry.ts"
import { fakeTool, makeStores } from "./support/Fakes.ts"
import { startFakeServer } from "./support/FakeServer.ts"
import type { RecordedRequest, Reply } from "./support/FakeServer.ts"
import { gate, streamedReply, turnChunks, until } from "./support/FakeStream.ts"

const isChat = (r: RecordedRequest) => r.path === "/api/agent/chat"
const isStop = (r: RecordedRequest) => r.path.endsWith("/stop")
const bodyOf = (r: RecordedRequest) => JSON.parse(r.body.toString("utf8")) as ChatRequest

/** A fake whose n-th chat request (from 1) is answered by `turn(n)`; stops answer `{ stopped }` and call `onStop`. */
const fakeServer = (turn: (n: number, request: ChatRequest) => Reply, onStop: () => boolean = () => false) => {
  let turns = 0
  return startFakeServer((recorded) => {
    if (isStop(recorded)) return { json: { stopped: onStop() } }
    if (isChat(recorded)) return turn(++turns, bodyOf(recorded))
    return { status: 404, json: { error: "not found", code: "not_found" } }
  })
}

/** Every status and every assistant message list the stores go through. */
const watch = (stores: ReturnType<typeof makeStores>) => {
  const statuses: Array<ExecutionStatus> = []
  const snapshots: Array<ReadonlyArray<Pick<ChatMessage, "id" | "content">>> = []
  stores.agentStore.subscribe((state, prev) => {
    if (state.status !== prev.status) statuses.push(state.status)
  })
  stores.chatStore.subscribe((state, prev) => {
    if (state.messages !== prev.messages) {
      snapshots.push(state.messages.filter((m) => m.role === "assistant").map(({ content, id }) => ({ id, content })))
    }
  })
  return { statuses, snapshots }
}

const setUp = (url: string, deps: Partial<OrchestratorDeps> = {}) => {
  const stores = makeStores()
  stores.chatStore.getState().addMessage({ role: "user", content: "Hi" })
  const orchestrator = makeOrchestrator({ ...stores, registry: new ToolRegistry(), ...deps })
  const layer = ChatTransport.layer({ baseUrl: url })
  return { stores, orchestrator, layer, seen: watch(stores) }
}

describe("Orchestrator over streamed answers", () => {
  it.effect("the answer grows in one message while the status is responding, then is replaced by the final one", () =>
    Effect.gen(function*() {
      const server = yield* fakeServer(() => streamedReply(turnChunks({ messageId: "srv_1", deltas: ["Hel", "lo ", "world"] })))
      const deltas: Array<readonly [string, string, ExecutionStatus, string | undefined]> = []
      const { layer, orchestrator, seen, stores } = setUp(server.url, {
        onDelta: (delta, messageId) =>
          deltas.push([delta, messageId, stores.agentStore.getState().status, stores.chatStore.getState().messages.at(-1)?.content])
      })

      const result = yield* orchestrator.run().pipe(Effect.provide(layer))

      assert.deepStrictEqual(seen.statuses, ["sending", "responding", "idle"])
      // Each delta is heard while the status is responding, the message already showing it.
      assert.deepStrictEqual(deltas, [
        ["Hel", "srv_1", "responding", "Hel"],
        ["lo ", "srv_1", "responding", "Hello "],
        ["world", "srv_1", "responding", "Hello world"]
      ])
      // One message under the server's id from `start` on: it grows, it is never removed or doubled.
      assert.deepStrictEqual(seen.snapshots.map((s) => s.map((m) => `${m.id}:${m.content}`)), [
        ["srv_1:"],
        ["srv_1:Hel"],
        ["srv_1:Hello "],
        ["srv_1:Hello world"],
        ["srv_1:Hello world"] // the final message, in its place
      ])
      const messages = stores.chatStore.getState().messages
      assert.deepStrictEqual(messages.map((m) => [m.role, m.id === "srv_1" ? m.content : "user"]), [["user", "user"], ["assistant", "Hello world"]])
      assert.isNull(stores.chatStore.getState().streamingId)
      assert.strictEqual(result._tag, "Answered")
      assert.strictEqual(result.message, messages[1])
      assert.strictEqual(server.requests[0]?.headers.accept, "text/event-stream")
    }))

  it.effect("a client tool round trip over streams: processing with the active tool while it runs; job calls are not run", () =>
    Effect.gen(function*() {
      const server = yield* fakeServer((n) =>
        streamedReply(turnChunks(
          n === 1
            ? {
              messageId: "srv_1",
              deltas: ["Let me ", "check."],
              jobs: [{ id: "job_1", kind: "research", toolCallId: "call_r" }],
              toolCalls: [{ id: "call_1", name: "lookup", args: { q: "sigma" } }]
            }
            : { messageId: "srv_2", deltas: ["Found ", "it."] }
        ))
      )
      const during: Array<readonly [ExecutionStatus, string | null]> = []
      let stores!: ReturnType<typeof makeStores>
      const lookup = fakeTool("lookup", [{ key: "q", type: "string", required: true }], () =>
        Effect.sync(() => {
          during.push([stores.agentStore.getState().status, stores.agentStore.getState().activeTool])
          return "sigma is a graph library"
        }))
      const setup = setUp(server.url, { registry: new ToolRegistry().register(lookup.tool) })
      stores = setup.stores

      const result = yield* setup.orchestrator.run().pipe(Effect.provide(setup.layer))

      assert.deepStrictEqual(lookup.calls, [{ q: "sigma" }])
      assert.deepStrictEqual(during, [["processing", "lookup"]])
      assert.deepStrictEqual(setup.seen.statuses, ["sending", "responding", "processing", "sending", "responding", "idle"])
      const messages = stores.chatStore.getState().messages
      assert.deepStrictEqual(messages.map((m) => m.role), ["user", "assistant", "tool", "assistant"])
      assert.deepStrictEqual(messages[1]?.toolCalls, [{ id: "call_1", name: "lookup", args: { q: "sigma" } }])
      assert.strictEqual(messages[1]?.content, "Let me check.")
      assert.strictEqual(messages[3]?.content, "Found it.")
      assert.deepStrictEqual(result.jobs, [{ id: "job_1", kind: "research", toolCallId: "call_r" }])
      // The second request carries the tool's result; nothing answered the server's job call.
      const second = bodyOf(server.requests.filter(isChat)[1]!)
      assert.deepStrictEqual(second.messages.map((m) => m.toolResult?.toolCallId ?? m.role), ["user", "assistant", "call_1"])
      assert.strictEqual(second.messages[2]?.toolResult?.result, "sigma is a graph library")
    }))

  it.effect("the cap of 8 holds over streams: the 8th answer's message becomes the limit message", () =>
    Effect.gen(function*() {
      const server = yield* fakeServer((n) =>
        streamedReply(turnChunks({ messageId: `srv_${n}`, deltas: [`round ${n}`], toolCalls: [{ id: `c${n}`, name: "again", args: {} }] }))
      )
      const again = fakeTool("again", [])
      const { layer, orchestrator, stores } = setUp(server.url, { registry: new ToolRegistry().register(again.tool) })

      const result = yield* orchestrator.run().pipe(Effect.provide(layer))

      assert.strictEqual(server.requests.filter(isChat).length, maxIterations)
      assert.strictEqual(again.calls.length, maxIterations - 1)
      const messages = stores.chatStore.getState().messages
      assert.strictEqual(messages.at(-1)?.content, iterationLimitMessage)
      assert.isFalse(messages.some((m) => m.id === `srv_${maxIterations}`))
      assert.strictEqual(result._tag, "IterationLimit")
      assert.strictEqual(stores.agentStore.getState().status, "idle")
    }))

  it.effect("stop: the server is asked once, its stopped answer is kept as the partial message, no tool runs", () =>
    Effect.gen(function*() {
      const stopped = gate()
      const server = yield* fakeServer(() => ({
        events: (async function*() {
          yield sseEvent({ type: "start", messageId: "srv_1" })
          yield sseEvent({ type: "text-delta", id: "t1", delta: "Half an" })
          await stopped.opened
          yield sseEvent({ type: "finish", finishReason: "stop", messageMetadata: { stopped: true } })
          yield SSE_DONE
        })()
      }), () => {
        stopped.open()
        return true
      })
      const { layer, orchestrator, stores } = setUp(server.url)

      const running = yield* Effect.forkChild(orchestrator.run().pipe(Effect.provide(layer)))
      yield* Effect.promise(() => until(() => stores.chatStore.getState().messages.at(-1)?.content === "Half an"))
      yield* orchestrator.stop.pipe(Effect.provide(layer))
      yield* orchestrator.stop.pipe(Effect.provide(layer))
      const result = yield* Fiber.join(running)

      const stops = server.requests.filter(isStop)
      assert.deepStrictEqual(stops.map((r) => [r.method, r.path]), [["POST", `/api/chats/${stores.chatStore.getState().chatId}/stop`]])
      assert.strictEqual(result._tag, "Stopped")
      assert.deepStrictEqual(
        { id: result.message.id, content: result.message.content, metadata: result.message.metadata },
        { id: "srv_1", content: "Half an", metadata: { stopped: true } }
      )
      assert.strictEqual(stores.chatStore.getState().messages.at(-1), result.message)
      assert.strictEqual(stores.agentStore.getState().status, "idle")
      assert.isFalse(stores.chatStore.getState().loading)
    }))

  it.effect("stop while a tool runs: the running one finishes, the next is answered as not run, nothing more is sent", () =>
    Effect.gen(function*() {
      const server = yield* fakeServer(() =>
        streamedReply(turnChunks({
          messageId: "srv_1",
          toolCalls: [{ id: "c1", name: "slow", args: {} }, { id: "c2", name: "slow", args: {} }]
        }))
      )
      const release = yield* Deferred.make<void>()
      const slow = fakeTool("slow", [], () => Effect.as(Deferred.await(release), "done"))
      const { layer, orchestrator, stores } = setUp(server.url, { registry: new ToolRegistry().register(slow.tool) })

      const running = yield* Effect.forkChild(orchestrator.run().pipe(Effect.provide(layer)))
      yield* Effect.promise(() => until(() => stores.agentStore.getState().activeTool === "slow"))
      yield* orchestrator.stop.pipe(Effect.provide(layer))
      yield* Deferred.succeed(release, undefined)
      const result = yield* Fiber.join(running)

      assert.strictEqual(result._tag, "Stopped")
      assert.strictEqual(slow.calls.length, 1)
      const results = stores.chatStore.getState().messages.flatMap((m) => m.toolResult === undefined ? [] : [m.toolResult])
      assert.deepStrictEqual(results, [
        { toolCallId: "c1", name: "slow", result: "done" },
        { toolCallId: "c2", name: "slow", error: notRunWhenStopped }
      ])
      assert.strictEqual(server.requests.filter(isChat).length, 1)
      // No request was in flight: the server had no turn to stop.
      assert.strictEqual(server.requests.filter(isStop).length, 0)
    }))

  it.effect("interrupting the run stops the server's turn and keeps the text that arrived, marked stopped", () =>
    Effect.gen(function*() {
      const server = yield* fakeServer(() => ({
        events: (async function*() {
          yield sseEvent({ type: "start", messageId: "srv_1" })
          yield sseEvent({ type: "text-delta", id: "t1", delta: "Hel" })
          await new Promise(() => {}) // the model thinks forever
        })()
      }))
      const { layer, orchestrator, stores } = setUp(server.url)

      const running = yield* Effect.forkChild(orchestrator.run().pipe(Effect.provide(layer)))
      yield* Effect.promise(() => until(() => stores.chatStore.getState().messages.at(-1)?.content === "Hel"))
      yield* Fiber.interrupt(running)

      assert.deepStrictEqual(server.requests.filter(isStop).map((r) => r.path), [`/api/chats/${stores.chatStore.getState().chatId}/stop`])
      const last = stores.chatStore.getState().messages.at(-1)
      assert.deepStrictEqual([last?.id, last?.content, last?.metadata], ["srv_1", "Hel", { stopped: true }])
      assert.isNull(stores.chatStore.getState().streamingId)
      assert.strictEqual(stores.agentStore.getState().status, "idle")
    }))

  it.effect("an error chunk sets the chat's error like a failed request; the growing message goes", () =>
    Effect.gen(function*() {
      const server = yield* fakeServer(() => streamedReply([
        { type: "start", messageId: "srv_1" },
        { type: "text-delta", id: "t1", delta: "Par" },
        { type: "error", errorText: "LLM provider error" }
      ]))
      const { layer, orchestrator, seen, stores } = setUp(server.url)

      const error = yield* Effect.flip(orchestrator.run().pipe(Effect.provide(layer)))

      assert.strictEqual(error._tag, "ChatTransportError")
      assert.strictEqual(error.message, "LLM provider error")
      assert.strictEqual(stores.chatStore.getState().error, "LLM provider error")
      assert.isFalse(stores.chatStore.getState().loading)
      assert.strictEqual(stores.agentStore.getState().status, "error")
      assert.deepStrictEqual(stores.chatStore.getState().messages.map((m) => m.role), ["user"])
      assert.deepStrictEqual(seen.statuses, ["sending", "responding", "error"])
    }))

  it.effect("with streaming off, the answer arrives whole over the JSON route", () =>
    Effect.gen(function*() {
      const server = yield* fakeServer(() => ({ json: { content: "Hello!", messageId: "srv_1" } }))
      const deltas: Array<string> = []
      const { layer, orchestrator, seen, stores } = setUp(server.url, { streaming: false, onDelta: (d) => deltas.push(d) })

      yield* orchestrator.run().pipe(Effect.provide(layer))

      assert.strictEqual(server.requests[0]?.headers.accept, "application/json")
      assert.deepStrictEqual(deltas, [])
      assert.deepStrictEqual(seen.snapshots, [[{ id: "srv_1", content: "Hello!" }]])
      assert.deepStrictEqual(seen.statuses, ["sending", "responding", "idle"])
      assert.strictEqual(stores.chatStore.getState().messages.at(-1)?.content, "Hello!")
    }))
})
