/**
 * A client that names an agent: every request carries it, and before the
 * first turn the agent's client tools are checked against the registry —
 * through the orchestrator over a scripted transport, through both
 * transports' lookups and through `run()` over HTTP.
 */
import type { AgentInfo, ChatRequest } from "@switchboard/domain"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { ApiClient } from "../src/api/ApiClient.ts"
import { AgentToolsMissing } from "../src/chat/AgentToolsMissing.ts"
import { ChatTransport } from "../src/chat/ChatTransport.ts"
import { makeOrchestrator } from "../src/chat/Orchestrator.ts"
import { closeRunClients, run } from "../src/chat/Run.ts"
import type { RunTool } from "../src/chat/Run.ts"
import { ToolRegistry } from "../src/tools/ToolRegistry.ts"
import { answer, callTools, fakeTool, makeStores, scriptedTransport } from "./support/Fakes.ts"
import { startFakeServer } from "./support/FakeServer.ts"
import type { RecordedRequest } from "./support/FakeServer.ts"

const tool = (name: string) => ({ name, description: `the ${name} tool`, parameters: [] })

const support: AgentInfo = {
  name: "support",
  description: "Answers customers",
  tools: [tool("lookup_order"), tool("refund_order")],
  jobKinds: [],
  contextSchema: { type: "object", properties: { customerId: { type: "string" } }, required: ["customerId"] }
}

describe("an orchestrator naming an agent", () => {
  it.effect("refuses before the first turn, naming every tool the registry lacks; nothing is sent", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      stores.chatStore.getState().addMessage({ role: "user", content: "Where is my order?" })
      const { agentLookups, layer, requests } = scriptedTransport([answer("never")], [support])
      const registry = new ToolRegistry().register(fakeTool("lookup_order", []).tool)

      const error = yield* makeOrchestrator({ ...stores, registry, agent: "support" }).run().pipe(
        Effect.provide(layer),
        Effect.flip
      )

      assert(error._tag === "AgentToolsMissing")
      assert.deepStrictEqual(error.missing, ["refund_order"])
      assert.include(error.message, `agent "support"`)
      assert.include(error.message, "refund_order")
      assert.deepStrictEqual(agentLookups, ["support"])
      assert.strictEqual(requests.length, 0)
      assert.strictEqual(stores.chatStore.getState().error, error.message)
      assert.strictEqual(stores.agentStore.getState().status, "error")
      assert.isFalse(stores.chatStore.getState().loading)
    }))

  it.effect("names the agent in every request and checks it once per orchestrator", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      const lookup = fakeTool("lookup_order", [], () => Effect.succeed({ status: "shipped" }))
      const refund = fakeTool("refund_order", [])
      const { agentLookups, layer, requests } = scriptedTransport(
        [callTools({ name: "lookup_order", args: {} }), answer("It shipped."), answer("You're welcome.")],
        [support]
      )
      const orchestrator = makeOrchestrator({
        ...stores,
        registry: new ToolRegistry().register(lookup.tool).register(refund.tool),
        agent: "support"
      })

      const first = yield* orchestrator.send("Where is my order?", { customerId: "c_42" }).pipe(Effect.provide(layer))
      const second = yield* orchestrator.send("Thanks", { customerId: "c_42" }).pipe(Effect.provide(layer))

      assert.strictEqual(first.message.content, "It shipped.")
      assert.strictEqual(second.message.content, "You're welcome.")
      assert.deepStrictEqual(agentLookups, ["support"])
      assert.strictEqual(requests.length, 3)
      for (const request of requests) {
        assert.strictEqual(request.agent, "support")
        assert.deepStrictEqual(request.context, { customerId: "c_42" })
      }
      assert.strictEqual(lookup.calls.length, 1)
    }))

  it.effect("without an agent, looks nothing up and sends no agent", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      stores.chatStore.getState().addMessage({ role: "user", content: "Hi" })
      const { agentLookups, layer, requests } = scriptedTransport([answer("Hello")])
      yield* makeOrchestrator({ ...stores, registry: new ToolRegistry() }).run().pipe(Effect.provide(layer))
      assert.deepStrictEqual(agentLookups, [])
      assert.isFalse("agent" in requests[0]!)
    }))

  it.effect("an unknown agent stops the turn with the server's 404, and is asked again on the next turn", () =>
    Effect.gen(function*() {
      const stores = makeStores()
      stores.chatStore.getState().addMessage({ role: "user", content: "Hi" })
      const { agentLookups, layer, requests } = scriptedTransport([answer("never")])
      const orchestrator = makeOrchestrator({ ...stores, registry: new ToolRegistry(), agent: "nobody" })
      const error = yield* orchestrator.run().pipe(Effect.provide(layer), Effect.flip)
      yield* orchestrator.run().pipe(Effect.provide(layer), Effect.flip)
      assert(error._tag === "ChatTransportError")
      assert.strictEqual(error.code, "agent_not_found")
      assert.deepStrictEqual(agentLookups, ["nobody", "nobody"])
      assert.strictEqual(requests.length, 0)
    }))
})

const agentsRoute = (recorded: RecordedRequest) =>
  recorded.path === "/api/agents/support"
    ? { json: support }
    : { status: 404, json: { error: "No agent named \"x\"", code: "agent_not_found", agent: "x" } }

for (
  const [label, layerFor] of [
    ["fetch (production)", ChatTransport.layer],
    ["typed HttpApi client", (options: { baseUrl: string }) => ChatTransport.layerNoDeps.pipe(Layer.provide(ApiClient.layer(options)))]
  ] as const
) {
  describe(`ChatTransport.agent over ${label}`, () => {
    it.effect("reads the agent's public view, and describes an unknown agent", () =>
      Effect.gen(function*() {
        const server = yield* startFakeServer(agentsRoute)
        const transport = yield* Effect.service(ChatTransport).pipe(Effect.provide(layerFor({ baseUrl: server.url })))
        const info = yield* transport.agent("support")
        assert.deepStrictEqual(info.tools.map((t) => t.name), ["lookup_order", "refund_order"])
        const error = yield* transport.agent("other").pipe(Effect.flip)
        assert.strictEqual(error.status, 404)
        assert.strictEqual(error.code, "agent_not_found")
        assert.deepStrictEqual(server.requests.map((r) => `${r.method} ${r.path}`), [
          "GET /api/agents/support",
          "GET /api/agents/other"
        ])
      }))
  })
}

describe("run() with an agent", () => {
  const lookupOrder = (calls: Array<unknown>): RunTool => ({
    name: "lookup_order",
    description: "Looks an order up",
    parameters: [{ key: "orderId", type: "string", required: true }],
    execute: (args, { agentContext }) => {
      calls.push({ args, agentContext })
      return { orderId: args["orderId"], status: "shipped" }
    }
  })
  const refundOrder: RunTool = { name: "refund_order", description: "Refunds", parameters: [], execute: () => "ok" }

  /** The support agent's route and a model that looks the order up once, then answers. */
  const supportServer = (recorded: RecordedRequest) => {
    if (recorded.method === "GET") return agentsRoute(recorded)
    const request = JSON.parse(recorded.body.toString("utf8")) as ChatRequest
    const last = request.messages.at(-1)!
    return last.role === "tool"
      ? { json: { content: `Order says: ${last.content}`, toolCalls: [], messageId: "srv_2" } }
      : { json: { content: "", toolCalls: [{ id: "call_1", name: "lookup_order", args: { orderId: "o_7" } }], messageId: "srv_1" } }
  }

  it.effect("checks the given tools, sends the agent and the context, and runs the tool", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer(supportServer)
      const calls: Array<unknown> = []
      const messages = yield* Effect.promise(() =>
        run([{ role: "user", content: "Where is o_7?" }], { customerId: "c_42" }, {
          serverUrl: server.url,
          agent: "support",
          tools: [lookupOrder(calls), refundOrder]
        })
      )
      assert.strictEqual(messages.at(-1)?.content, `Order says: {"orderId":"o_7","status":"shipped"}`)
      assert.deepStrictEqual(calls, [{ args: { orderId: "o_7" }, agentContext: { customerId: "c_42" } }])
      const posts = server.requests.filter((r) => r.method === "POST")
      assert.deepStrictEqual(server.requests.filter((r) => r.method === "GET").map((r) => r.path), ["/api/agents/support"])
      assert.strictEqual(posts.length, 2)
      for (const post of posts) {
        const body = JSON.parse(post.body.toString("utf8")) as ChatRequest
        assert.strictEqual(body.agent, "support")
        assert.deepStrictEqual(body.context, { customerId: "c_42" })
      }
    }).pipe(Effect.ensuring(Effect.promise(closeRunClients))))

  it.effect("rejects with AgentToolsMissing naming the tools not given, before any chat request", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer(supportServer)
      const error = yield* Effect.promise(() =>
        run([{ role: "user", content: "Where is o_7?" }], { customerId: "c_42" }, {
          serverUrl: server.url,
          agent: "support",
          tools: [lookupOrder([])]
        }).then(() => undefined, (e: unknown) => e)
      )
      assert(error instanceof AgentToolsMissing)
      assert.deepStrictEqual(error.missing, ["refund_order"])
      assert.deepStrictEqual(server.requests.map((r) => r.method), ["GET"])
    }).pipe(Effect.ensuring(Effect.promise(closeRunClients))))

  it.effect("with the built-in registry, only transcribe_video is implemented", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer(supportServer)
      const error = yield* Effect.promise(() =>
        run([{ role: "user", content: "Hi" }], null, { serverUrl: server.url, agent: "support" })
          .then(() => undefined, (e: unknown) => e)
      )
      assert(error instanceof AgentToolsMissing)
      assert.deepStrictEqual(error.missing, ["lookup_order", "refund_order"])
      assert.include(error.message, "it implements transcribe_video")
    }).pipe(Effect.ensuring(Effect.promise(closeRunClients))))
})
