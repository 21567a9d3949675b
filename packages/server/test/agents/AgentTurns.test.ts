/**
 * An agent's turns beyond one request: a job's wake turn runs the chat's agent
 * (its prompt, its tools, its model — the context of the dispatching turn), and
 * an agent changed on one replica is what the other replica's next turn uses
 * (agents are read from the database per turn: no cache to go stale).
 */
import { assert, describe, it, layer } from "@effect/vitest"
import type { ProviderChatParams } from "@switchboard/domain"
import { subagentResultOf } from "@switchboard/domain"
import { Effect, Layer } from "effect"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { makeFakeSubagents } from "../support/FakeSubagents.ts"
import { settled, teacher, transcriptOf, user } from "../support/JobsHelpers.ts"
import { backend, makeTestDatabase } from "../support/TestDatabase.ts"
import { baseUrl, layerReplica, layerTestServer, postJson, postJsonAt, requestAt } from "../support/TestServer.ts"

const ADMIN_TOKEN = "admin-token-for-agent-turns"
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }

const researcher = {
  name: "researcher",
  systemPrompt: "You research for {{context.team}}.",
  jobKinds: ["research"],
  model: "researcher-model"
}

describe("an agent's wake turns", () => {
  const fake = makeFakeProvider()
  const subagents = makeFakeSubagents()
  subagents.instant()

  layer(layerTestServer(fake.layer, { ADMIN_TOKEN }, { subagents: subagents.layer }), { excludeTestServices: true })("over HTTP", (it) => {
    it.effect("a job's wake turn runs the chat's agent, with the dispatching turn's context", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* postJson("/admin/agents", researcher, admin)).status, 201)
        fake.answerWith((params) => Effect.succeed(teacher(params)))
        const res = yield* postJson("/api/agent/chat", {
          agent: "researcher",
          chatId: "wake-agent",
          messages: [user("u1", "research graph layouts")],
          context: { team: "blue" }
        })
        assert.strictEqual(res.status, 200, res.text)
        assert.strictEqual(res.json.jobs.length, 1)
        const [job] = yield* settled("wake-agent")
        assert.strictEqual(job!.status, "done")
        const isWake = (params: ProviderChatParams) => {
          const last = params.messages.at(-1)
          return last !== undefined && subagentResultOf(last) !== undefined
        }
        const wake = fake.calls.find(isWake)
        assert.isDefined(wake, "the steer was answered by a wake turn")
        assert.strictEqual(wake!.systemPrompt.split("\n\n")[0], "You research for blue.")
        assert.include(wake!.systemPrompt, "The tools research dispatch sub-agents")
        assert.deepStrictEqual(wake!.toolSchemas.map((t) => t.name), ["research"])
        assert.strictEqual(wake!.model, "researcher-model")
        const transcript = yield* transcriptOf("wake-agent")
        assert.match(transcript.at(-1)!.content, /^wake answer: /)
      }))
  })
})

describe(`an agent changed on one replica, on one ${backend} database`, () => {
  it.live("the other replica's next turn uses the new definition", () =>
    Effect.gen(function*() {
      const db = yield* makeTestDatabase
      const fake = makeFakeProvider()
      const memoMap = yield* Layer.makeMemoMap
      const scope = yield* Effect.scope
      const replica = () => Layer.buildWithMemoMap(layerReplica(fake.layer, db.client(), {}, { ADMIN_TOKEN }), memoMap, scope)
      const [a, b] = yield* Effect.all([replica(), replica()], { concurrency: 2 })
      const urlA = yield* baseUrl.pipe(Effect.provide(a))
      const urlB = yield* baseUrl.pipe(Effect.provide(b))

      const put = (systemPrompt: string, model: string) =>
        requestAt(urlA, "/admin/agents/changing", {
          method: "PUT",
          headers: { "content-type": "application/json", ...admin },
          body: JSON.stringify({ systemPrompt, model })
        })
      assert.strictEqual((yield* put("First {{context.n}}.", "model-1")).status, 200)
      fake.answerWith(() => Effect.succeed({ content: "ok" }))
      const first = yield* postJsonAt(urlB, "/api/agent/chat", { agent: "changing", chatId: "c-1", messages: [user("u1", "one")], context: { n: 1 } })
      assert.strictEqual(first.status, 200, first.text)
      assert.strictEqual(fake.calls.at(-1)!.systemPrompt, "First 1.")
      assert.strictEqual(fake.calls.at(-1)!.model, "model-1")

      assert.strictEqual((yield* put("Second {{context.n}}.", "model-2")).status, 200)
      const second = yield* postJsonAt(urlB, "/api/agent/chat", { chatId: "c-1", messages: [user("u2", "two")], context: { n: 2 } })
      assert.strictEqual(second.status, 200, second.text)
      assert.strictEqual(fake.calls.at(-1)!.systemPrompt, "Second 2.")
      assert.strictEqual(fake.calls.at(-1)!.model, "model-2")

      assert.strictEqual((yield* requestAt(urlA, "/admin/agents/changing", { method: "DELETE", headers: admin })).status, 204)
      const gone = yield* postJsonAt(urlB, "/api/agent/chat", { chatId: "c-1", messages: [user("u3", "three")], context: { n: 3 } })
      assert.strictEqual(gone.status, 404)
      assert.strictEqual(gone.json.code, "agent_not_found")
    }).pipe(Effect.scoped))
})
