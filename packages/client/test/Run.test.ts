/**
 * The promise API (`run`) over real HTTP, against a local fake of the
 * Switchboard chat route: the same loop as the Effect orchestrator, seen from
 * a program that only knows Promises.
 */
import type { ChatRequest, ChatResponse } from "@switchboard/domain"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { ChatTransportError } from "../src/chat/ChatTransport.ts"
import { closeRunClients, run } from "../src/chat/Run.ts"
import type { RunTool } from "../src/chat/Run.ts"
import { startFakeServer } from "./support/FakeServer.ts"
import type { RecordedRequest } from "./support/FakeServer.ts"
import { streamedReply, turnChunks } from "./support/FakeStream.ts"

const requestOf = (recorded: RecordedRequest) => JSON.parse(recorded.body.toString("utf8")) as ChatRequest

/** Asks for `lookup` until the history holds `rounds` tool results, then answers with what the tools said. */
const toolRoundsThenAnswer = (rounds: number) => (recorded: RecordedRequest) => {
  const request = requestOf(recorded)
  const results = request.messages.filter((m) => m.role === "tool")
  const answer: ChatResponse = results.length < rounds
    ? {
      content: "",
      toolCalls: [{ id: `call_${results.length + 1}`, name: "lookup", args: { q: `q${results.length + 1}` } }],
      messageId: `srv_${results.length + 1}`
    }
    : { content: `done: ${results.map((m) => m.content).join(", ")}`, toolCalls: [], messageId: "srv_final" }
  return { json: answer }
}

const lookup = (calls: Array<unknown>): RunTool => ({
  name: "lookup",
  description: "looks a word up",
  parameters: [{ key: "q", type: "string", required: true }],
  execute: async (args) => {
    calls.push(args)
    return `found ${String(args["q"])}`
  }
})

const runPromise = <A>(f: () => Promise<A>) => Effect.promise(f)

describe("run (promise API)", () => {
  it.effect("runs the tool rounds and resolves to the turn's messages, the final answer last", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer(toolRoundsThenAnswer(3))
      const calls: Array<unknown> = []
      const context = { projectId: "p1", activeSceneId: null, mediaAssets: [], playbackTimeMs: 0 }

      const messages = yield* runPromise(() =>
        run([{ role: "user", content: "look three things up" }], context, {
          serverUrl: server.url,
          chatId: "chat-run-1",
          tools: [lookup(calls)]
        })
      )

      assert.deepStrictEqual(
        messages.map((m) => m.role),
        ["assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant"]
      )
      const last = messages[messages.length - 1]!
      assert.strictEqual(last.content, "done: found q1, found q2, found q3")
      assert.strictEqual(last.id, "srv_final")
      assert.deepStrictEqual(calls, [{ q: "q1" }, { q: "q2" }, { q: "q3" }])
      // Four chat calls, each with the grown history, the context and the given chat id.
      assert.strictEqual(server.requests.length, 4)
      const sent = server.requests.map(requestOf)
      assert.deepStrictEqual(sent.map((r) => r.messages.length), [1, 3, 5, 7])
      assert.deepStrictEqual(sent[0]?.context, context)
      assert.isTrue(sent.every((r) => r.chatId === "chat-run-1"))
      // The user message got an id and a timestamp; it is not part of the result.
      assert.strictEqual(sent[0]?.messages[0]?.role, "user")
      assert.isString(sent[0]?.messages[0]?.id)
    }).pipe(Effect.scoped, Effect.ensuring(Effect.promise(closeRunClients))))

  it.effect("a tool that throws becomes a tool error the model sees; the bearer token is sent", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer(toolRoundsThenAnswer(1))
      const failing: RunTool = {
        name: "lookup",
        description: "always fails",
        parameters: [{ key: "q", type: "string", required: true }],
        execute: () => {
          throw new Error("dictionary offline")
        }
      }

      const messages = yield* runPromise(() =>
        run([{ role: "user", content: "hi" }], null, { serverUrl: server.url, token: "secret", tools: [failing] })
      )

      const tool = messages.find((m) => m.role === "tool")
      assert.include(tool?.toolResult?.error, "dictionary offline")
      assert.strictEqual(messages[messages.length - 1]?.role, "assistant")
      assert.isTrue(server.requests.every((r) => r.headers.authorization === "Bearer secret"))
      assert.isUndefined(requestOf(server.requests[0]!).context)
    }).pipe(Effect.scoped, Effect.ensuring(Effect.promise(closeRunClients))))

  it.effect("rejects with the server's error (status and code) when the turn fails", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer(() => ({
        status: 409,
        json: { error: "A turn for chat \"c1\" is already in flight", code: "turn_in_flight", chatId: "c1" }
      }))

      const error = yield* runPromise(() =>
        run([{ role: "user", content: "hi" }], null, { serverUrl: server.url, chatId: "c1", tools: [] }).then(
          () => undefined,
          (e: unknown) => e
        )
      )

      assert.instanceOf(error, ChatTransportError)
      const failure = error as ChatTransportError
      assert.strictEqual(failure.status, 409)
      assert.strictEqual(failure.code, "turn_in_flight")
      assert.include(failure.message, "already in flight")
    }).pipe(Effect.scoped, Effect.ensuring(Effect.promise(closeRunClients))))

  it.effect("a busy replica (503 overloaded) rejects with the busy sentence and its retryAfter, nothing retried", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer(() => ({
        status: 503,
        json: { error: "Too many turns in flight on this replica", code: "overloaded" },
        headers: { "retry-after": "3" }
      }))

      const error = yield* runPromise(() =>
        run([{ role: "user", content: "hi" }], null, { serverUrl: server.url, tools: [] }).then(() => undefined, (e: unknown) => e)
      )

      assert.instanceOf(error, ChatTransportError)
      const busy = error as ChatTransportError
      assert.strictEqual(busy.message, "Switchboard is busy (too many turns at once); retry in 3 s")
      assert.deepStrictEqual([busy.status, busy.code, busy.retryAfter], [503, "overloaded", 3])
      assert.strictEqual(server.requests.length, 1)
    }).pipe(Effect.scoped, Effect.ensuring(Effect.promise(closeRunClients))))

  it.effect("aborting the signal stops the turn, on the server too, and rejects", () =>
    Effect.gen(function*() {
      // The fake never answers the chat call, so only the abort can end the turn.
      const server = yield* startFakeServer((recorded) =>
        recorded.path.endsWith("/stop") ? { json: { stopped: true } } : new Promise(() => {})
      )
      const controller = new AbortController()
      const pending = run([{ role: "user", content: "hi" }], null, {
        serverUrl: server.url,
        chatId: "chat-aborted",
        tools: [],
        signal: controller.signal
      }).then(() => "resolved", (e: unknown) => e)
      yield* Effect.promise(async () => {
        while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
      })
      controller.abort()
      const outcome = yield* Effect.promise(() => pending)
      assert.notStrictEqual(outcome, "resolved")
      assert.notInstanceOf(outcome, ChatTransportError)
      assert.deepStrictEqual(server.requests.map((r) => r.path), ["/api/agent/chat", "/api/chats/chat-aborted/stop"])
    }).pipe(Effect.scoped, Effect.ensuring(Effect.promise(closeRunClients))))

  it.effect("onDelta hears the text as it streams, every round's", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer((recorded) => {
        const results = requestOf(recorded).messages.filter((m) => m.role === "tool").length
        return streamedReply(turnChunks(
          results === 0
            ? { messageId: "srv_1", deltas: ["Looking ", "up. "], toolCalls: [{ id: "call_1", name: "lookup", args: { q: "x" } }] }
            : { messageId: "srv_2", deltas: ["Found ", "x."] }
        ))
      })
      const deltas: Array<string> = []

      const messages = yield* runPromise(() =>
        run([{ role: "user", content: "look x up" }], null, {
          serverUrl: server.url,
          tools: [lookup([])],
          onDelta: (text) => deltas.push(text)
        })
      )

      assert.deepStrictEqual(deltas, ["Looking ", "up. ", "Found ", "x."])
      assert.deepStrictEqual(messages.map((m) => [m.role, m.content]), [
        ["assistant", "Looking up. "],
        ["tool", "found x"],
        ["assistant", "Found x."]
      ])
      assert.isTrue(server.requests.every((r) => r.headers.accept === "text/event-stream"))
    }).pipe(Effect.scoped, Effect.ensuring(Effect.promise(closeRunClients))))
})
