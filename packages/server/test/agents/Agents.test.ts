/**
 * Agents as configuration (docs/agents.md), over real HTTP: the admin routes
 * define agents, the public route shows one without its prompt, and a chat
 * turn runs its agent — what the provider receives is exactly the agent's
 * prompt (filled from the context), client tools, job tools and model. A chat
 * keeps the agent of its first turn; refused turns store nothing.
 */
import { assert, describe, layer } from "@effect/vitest"
import type { ChatMessage, ToolSchema } from "@switchboard/domain"
import { BUILT_IN_AGENT, clientToolSchemas } from "@switchboard/domain"
import { Effect } from "effect"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { makeFakeSubagents } from "../support/FakeSubagents.ts"
import { readEventStream, streamedText, streamInit } from "../support/EventStream.ts"
import { baseUrl, layerTestServer, postJson, request } from "../support/TestServer.ts"

const ADMIN_TOKEN = "admin-token-for-agents"
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }

const user = (id: string, content: string): ChatMessage => ({ id, role: "user", content, timestamp: 1_700_000_000_000 })

const mediaContext = {
  projectId: "p1",
  activeSceneId: null,
  mediaAssets: [],
  playbackTimeMs: 0
}

const LookUp: ToolSchema = {
  name: "look_up_order",
  description: "Looks an order up in the shop.",
  parameters: [{ key: "orderId", type: "string", required: true }]
}

const support = {
  name: "support",
  description: "The shop's support agent.",
  systemPrompt: "You help {{context.customer.name}} (plan {{ context.plan }}). Missing: [{{context.nothing}}]. Tags: {{context.tags}}",
  tools: [LookUp],
  jobKinds: ["research"],
  contextSchema: {
    type: "object",
    properties: {
      customer: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
      plan: { type: "string" }
    },
    required: ["customer"]
  },
  model: "support-model-1"
}

const putJson = (path: string, body: unknown, headers: Record<string, string> = admin) =>
  request(path, { method: "PUT", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) })

const transcriptOf = (chatId: string) => request(`/api/chats/${chatId}/messages`)

describe("agents", () => {
  const fake = makeFakeProvider()
  const subagents = makeFakeSubagents()
  const server = layerTestServer(fake.layer, { ADMIN_TOKEN }, { subagents: subagents.layer })

  layer(server, { excludeTestServices: true })("over HTTP", (it) => {
    it.effect("admin CRUD: create 201, exists 409, list (built-in first), put replaces, built-in 409, delete 204", () =>
      Effect.gen(function*() {
        const created = yield* postJson("/admin/agents", { ...support, name: "crud" }, admin)
        assert.strictEqual(created.status, 201)
        assert.deepStrictEqual(created.json, { name: "crud" })

        const again = yield* postJson("/admin/agents", { ...support, name: "crud" }, admin)
        assert.strictEqual(again.status, 409)
        assert.strictEqual(again.json.code, "agent_exists")

        const noToken = yield* postJson("/admin/agents", { ...support, name: "crud2" })
        assert.strictEqual(noToken.status, 401)

        const list = yield* request("/admin/agents", { headers: admin })
        assert.strictEqual(list.status, 200)
        assert.strictEqual(list.json.agents[0].name, BUILT_IN_AGENT)
        assert.isTrue(list.json.agents[0].builtIn)
        const crud = list.json.agents.find((a: { name: string }) => a.name === "crud")
        assert.strictEqual(crud.systemPrompt, support.systemPrompt)
        assert.isFalse(crud.builtIn)

        const { name: _, ...body } = support
        const replaced = yield* putJson("/admin/agents/crud", { ...body, systemPrompt: "Replaced.", tools: [] })
        assert.strictEqual(replaced.status, 200)
        assert.strictEqual(replaced.json.systemPrompt, "Replaced.")
        assert.deepStrictEqual(replaced.json.tools, [])
        const info = yield* request("/api/agents/crud")
        assert.deepStrictEqual(info.json.tools, [])

        const putBuiltIn = yield* putJson(`/admin/agents/${BUILT_IN_AGENT}`, body)
        assert.strictEqual(putBuiltIn.status, 409)
        assert.strictEqual(putBuiltIn.json.code, "agent_builtin")
        const deleteBuiltIn = yield* request(`/admin/agents/${BUILT_IN_AGENT}`, { method: "DELETE", headers: admin })
        assert.strictEqual(deleteBuiltIn.status, 409)
        assert.strictEqual(deleteBuiltIn.json.code, "agent_builtin")

        const deleted = yield* request("/admin/agents/crud", { method: "DELETE", headers: admin })
        assert.strictEqual(deleted.status, 204)
        const gone = yield* request("/api/agents/crud")
        assert.strictEqual(gone.status, 404)
        assert.strictEqual(gone.json.code, "agent_not_found")
        const deletedAgain = yield* request("/admin/agents/crud", { method: "DELETE", headers: admin })
        assert.strictEqual(deletedAgain.status, 404)
      }))

    it.effect("a definition that is not right is a 400 on create: a bad contextSchema, a job tool as a client tool", () =>
      Effect.gen(function*() {
        const badSchema = yield* postJson("/admin/agents", { ...support, name: "bad", contextSchema: { type: "no-such-type" } }, admin)
        assert.strictEqual(badSchema.status, 400)
        assert.strictEqual(badSchema.json.code, "invalid_request")
        assert.include(badSchema.json.error, "contextSchema")

        const jobTool = yield* postJson("/admin/agents", {
          ...support,
          name: "bad",
          tools: [{ ...LookUp, name: "research" }]
        }, admin)
        assert.strictEqual(jobTool.status, 400)
        assert.include(jobTool.json.error, "tools[0]")

        const badName = yield* postJson("/admin/agents", { ...support, name: "Has Space" }, admin)
        assert.strictEqual(badName.status, 400)
        assert.strictEqual((yield* request("/api/agents/bad")).status, 404, "nothing was stored")
      }))

    it.effect("GET /api/agents/{name} is the public view: never the prompt or the model", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* postJson("/admin/agents", { ...support, name: "public" }, admin)).status, 201)
        const info = yield* request("/api/agents/public")
        assert.strictEqual(info.status, 200)
        assert.deepStrictEqual(Object.keys(info.json).sort(), ["contextSchema", "description", "jobKinds", "name", "tools"])
        assert.notInclude(info.text, "You help")
        assert.notInclude(info.text, "support-model-1")
        assert.deepStrictEqual(info.json.tools, [LookUp])

        const builtIn = yield* request(`/api/agents/${BUILT_IN_AGENT}`)
        assert.strictEqual(builtIn.status, 200)
        assert.deepStrictEqual(builtIn.json.tools, clientToolSchemas)
        assert.isUndefined(builtIn.json.systemPrompt)
      }))

    it.effect("a custom agent's turn: its filled prompt, its client tools and job tools, its model reach the provider", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* postJson("/admin/agents", { ...support, name: "shop" }, admin)).status, 201)
        fake.answerWith(() => Effect.succeed({ content: "hello" }))
        // A value that itself reads `{{context.…}}` is text: it is not expanded again.
        const context = { customer: { name: "Ada {{context.plan}}" }, plan: "gold", tags: ["a", 1] }

        const before = fake.calls.length
        const res = yield* postJson("/api/agent/chat", { agent: "shop", chatId: "shop-1", messages: [user("u1", "hi")], context })
        assert.strictEqual(res.status, 200, res.text)
        const call = fake.calls[before]!
        assert.strictEqual(
          call.systemPrompt.split("\n\n")[0],
          "You help Ada {{context.plan}} (plan gold). Missing: []. Tags: [\"a\",1]"
        )
        assert.include(call.systemPrompt, "The tools research dispatch sub-agents", "the job text, for the offered job tool only")
        assert.notInclude(call.systemPrompt, "media editing project", "nothing of the built-in's prompt")
        assert.deepStrictEqual(call.toolSchemas.map((t) => t.name), ["look_up_order", "research"])
        assert.deepStrictEqual(call.toolSchemas[0], LookUp)
        assert.strictEqual(call.model, "support-model-1")

        // Without a chatId: the client tools only, no job text.
        const unpersisted = yield* postJson("/api/agent/chat", { agent: "shop", messages: [user("u1", "hi")], context })
        assert.strictEqual(unpersisted.status, 200)
        const plain = fake.calls.at(-1)!
        assert.deepStrictEqual(plain.toolSchemas.map((t) => t.name), ["look_up_order"])
        assert.strictEqual(plain.systemPrompt, "You help Ada {{context.plan}} (plan gold). Missing: []. Tags: [\"a\",1]")
        assert.strictEqual(plain.model, "support-model-1")
      }))

    it.effect("an agent without job kinds is offered no job tool, and the prompt gets no job text", () =>
      Effect.gen(function*() {
        const { contextSchema: _, model: __, ...rest } = support
        assert.strictEqual((yield* postJson("/admin/agents", { ...rest, name: "nojobs", jobKinds: [], systemPrompt: "Plain." }, admin)).status, 201)
        fake.answerWith(() => Effect.succeed({ content: "ok" }))
        const res = yield* postJson("/api/agent/chat", { agent: "nojobs", chatId: "nojobs-1", messages: [user("u1", "hi")], context: { any: [1] } })
        assert.strictEqual(res.status, 200, res.text)
        const call = fake.calls.at(-1)!
        assert.strictEqual(call.systemPrompt, "Plain.")
        assert.deepStrictEqual(call.toolSchemas.map((t) => t.name), ["look_up_order"])
        assert.isUndefined(call.model, "no override: the configured LLM_MODEL")
      }))

    it.effect("a call to a job tool the agent is not offered is the client's, not a job", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* postJson("/admin/agents", { ...support, name: "calls" }, admin)).status, 201)
        fake.answerWith(() =>
          Effect.succeed({ content: "", toolCalls: [{ id: "call-1", name: "demo", args: { prompt: "x" } }] })
        )
        const res = yield* postJson("/api/agent/chat", {
          agent: "calls",
          chatId: "calls-1",
          messages: [user("u1", "hi")],
          context: { customer: { name: "Bo" } }
        })
        assert.strictEqual(res.status, 200, res.text)
        assert.deepStrictEqual(res.json.toolCalls.map((c: { name: string }) => c.name), ["demo"])
        assert.isUndefined(res.json.jobs)
        const jobs = yield* request("/api/jobs?chatId=calls-1")
        assert.deepStrictEqual(jobs.json.jobs, [])
      }))

    it.effect("the context schema: a context failing it is a 400 naming the path, and nothing is stored", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* postJson("/admin/agents", { ...support, name: "strict" }, admin)).status, 201)
        const before = fake.calls.length
        const wrongType = yield* postJson("/api/agent/chat", {
          agent: "strict",
          chatId: "strict-1",
          messages: [user("u1", "hi")],
          context: { customer: { name: 7 } }
        })
        assert.strictEqual(wrongType.status, 400)
        assert.strictEqual(wrongType.json.code, "invalid_request")
        assert.include(wrongType.json.error, "context.customer.name")

        const missing = yield* postJson("/api/agent/chat", { agent: "strict", chatId: "strict-1", messages: [user("u1", "hi")], context: {} })
        assert.strictEqual(missing.status, 400)
        assert.include(missing.json.error, "customer")

        assert.strictEqual(fake.calls.length, before, "the provider is not called")
        assert.strictEqual((yield* transcriptOf("strict-1")).status, 404, "no chat was created")

        // The built-in's context is an AgentContext, as it always was.
        const builtIn = yield* postJson("/api/agent/chat", { chatId: "strict-2", messages: [user("u1", "hi")], context: { customer: {} } })
        assert.strictEqual(builtIn.status, 400)
        assert.include(builtIn.json.error, "context.projectId")
        assert.strictEqual((yield* transcriptOf("strict-2")).status, 404)
      }))

    it.effect("an unknown agent is a 404 agent_not_found, and nothing is stored", () =>
      Effect.gen(function*() {
        const res = yield* postJson("/api/agent/chat", { agent: "nobody", chatId: "nobody-1", messages: [user("u1", "hi")] })
        assert.strictEqual(res.status, 404)
        assert.strictEqual(res.json.code, "agent_not_found")
        assert.strictEqual(res.json.agent, "nobody")
        assert.strictEqual((yield* transcriptOf("nobody-1")).status, 404)
        const plain = yield* postJson("/api/agent/chat", { agent: "nobody", messages: [user("u1", "hi")] })
        assert.strictEqual(plain.status, 404)
      }))

    it.effect("a chat keeps the agent of its first turn; naming another is a 409 agent_mismatch that stores nothing", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* postJson("/admin/agents", { ...support, name: "keeper" }, admin)).status, 201)
        fake.answerWith(() => Effect.succeed({ content: "ok" }))
        const context = { customer: { name: "Cy" } }
        const first = yield* postJson("/api/agent/chat", { agent: "keeper", chatId: "keep-1", messages: [user("u1", "one")], context })
        assert.strictEqual(first.status, 200, first.text)

        // No `agent`: the chat's, its context checked against the chat's agent (not the default's).
        const second = yield* postJson("/api/agent/chat", { chatId: "keep-1", messages: [user("u2", "two")], context })
        assert.strictEqual(second.status, 200, second.text)
        assert.include(fake.calls.at(-1)!.systemPrompt, "You help Cy")
        assert.strictEqual(fake.calls.at(-1)!.model, "support-model-1")


        const before = fake.calls.length
        const other = yield* postJson("/api/agent/chat", {
          agent: BUILT_IN_AGENT,
          chatId: "keep-1",
          messages: [user("u3", "three")],
          context: mediaContext
        })
        assert.strictEqual(other.status, 409)
        assert.strictEqual(other.json.code, "agent_mismatch")
        assert.strictEqual(other.json.agent, "keeper")
        assert.strictEqual(fake.calls.length, before)
        const stored = yield* transcriptOf("keep-1")
        assert.notInclude(stored.json.messages.map((m: ChatMessage) => m.id), "u3", "a refused turn stores nothing")

        // A chat of the built-in agent, the other way round.
        assert.strictEqual((yield* postJson("/api/agent/chat", { chatId: "keep-2", messages: [user("u1", "one")] })).status, 200)
        const mismatch = yield* postJson("/api/agent/chat", { agent: "keeper", chatId: "keep-2", messages: [user("u2", "two")], context })
        assert.strictEqual(mismatch.status, 409)
        assert.strictEqual(mismatch.json.agent, BUILT_IN_AGENT)
        const same = yield* postJson("/api/agent/chat", { agent: BUILT_IN_AGENT, chatId: "keep-2", messages: [user("u2", "two")] })
        assert.strictEqual(same.status, 200)
      }))

    it.effect("a streamed turn naming no agent, in a chat of another than the default, streams as the chat's agent", () =>
      Effect.gen(function*() {
        const { contextSchema: _, ...plain } = support
        assert.strictEqual((yield* postJson("/admin/agents", { ...plain, name: "streamer", systemPrompt: "You stream." }, admin)).status, 201)
        fake.answerWith(() => Effect.succeed({ content: "streamed answer" }))
        assert.strictEqual((yield* postJson("/api/agent/chat", { agent: "streamer", chatId: "stream-agent-1", messages: [user("u1", "one")] })).status, 200)

        // The default is assumed first; the chat's row says "streamer", and the turn runs again as its, on the same stream.
        const url = `${yield* baseUrl}/api/agent/chat`
        const streamed = yield* readEventStream(url, streamInit({ chatId: "stream-agent-1", messages: [user("u2", "two")] }))
        assert.strictEqual(streamed.status, 200)
        assert.strictEqual(streamedText(streamed.chunks), "streamed answer")
        assert.strictEqual(streamed.chunks.at(-1)?.type, "finish")
        assert.isTrue(streamed.done)
        assert.strictEqual(fake.calls.at(-1)!.systemPrompt.split("\n")[0], "You stream.")
      }))

    it.effect("a chat whose agent was deleted answers 404 agent_not_found", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* postJson("/admin/agents", { ...support, name: "doomed" }, admin)).status, 201)
        fake.answerWith(() => Effect.succeed({ content: "ok" }))
        const context = { customer: { name: "Di" } }
        assert.strictEqual((yield* postJson("/api/agent/chat", { agent: "doomed", chatId: "doomed-1", messages: [user("u1", "one")], context })).status, 200)
        assert.strictEqual((yield* request("/admin/agents/doomed", { method: "DELETE", headers: admin })).status, 204)
        const later = yield* postJson("/api/agent/chat", { chatId: "doomed-1", messages: [user("u2", "two")], context })
        assert.strictEqual(later.status, 404)
        assert.strictEqual(later.json.code, "agent_not_found")
        assert.strictEqual(later.json.agent, "doomed")
        const transcript = yield* transcriptOf("doomed-1")
        assert.deepStrictEqual(transcript.json.messages.map((m: ChatMessage) => m.id).filter((id: string) => id.startsWith("u")), ["u1"])
      }))
  })

  layer(layerTestServer(makeFakeProvider().layer, { ADMIN_TOKEN, DEFAULT_AGENT: "helper" }), { excludeTestServices: true })(
    "with DEFAULT_AGENT",
    (it) => {
      it.effect("turns naming no agent run the default; an unknown default is a 404 until it is defined", () =>
        Effect.gen(function*() {
          const undefinedDefault = yield* postJson("/api/agent/chat", { chatId: "d-1", messages: [user("u1", "hi")] })
          assert.strictEqual(undefinedDefault.status, 404)
          assert.strictEqual(undefinedDefault.json.agent, "helper")

          const { name: _, contextSchema: __, ...body } = support
          assert.strictEqual((yield* putJson("/admin/agents/helper", { ...body, systemPrompt: "Helper." })).status, 200)
          const res = yield* postJson("/api/agent/chat", { chatId: "d-1", messages: [user("u1", "hi")], context: { a: 1 } })
          assert.strictEqual(res.status, 200, res.text)
          const mismatch = yield* postJson("/api/agent/chat", {
            agent: BUILT_IN_AGENT,
            chatId: "d-1",
            messages: [user("u2", "hi")],
            context: mediaContext
          })
          assert.strictEqual(mismatch.json.agent, "helper")
        }))
    }
  )
})
