/**
 * Planner decisions too large to keep: a decision whose
 * arguments ran to 17 MiB used to be recorded, and its task's decision log
 * then answered 503 `database_unavailable` for good (the driver refuses to
 * read a row over 16 MiB). Now the answer is read up to
 * `LLM_MAX_RESPONSE_BYTES`, arguments and prompts are bounded by what one
 * stored value may hold, and nothing too large is recorded.
 */
import { assert, describe, layer } from "@effect/vitest"
import { maxStoredValueBytes } from "@switchboard/domain"
import { Effect, Layer } from "effect"
import { client, decisionBody, layerPlannerServer, plannerEnv } from "../support/ControlPlane.ts"
import type { Client } from "../support/ControlPlane.ts"
import { FakeOpenAi } from "@switchboard/providers/testing"
import { baseUrl } from "../support/TestServer.ts"

const MiB = 1024 * 1024
let names = 0

/** The OpenAI fake, emptied, behind a freshly activated profile; a host holding a fresh task. */
const ready = Effect.gen(function*() {
  const c = client(yield* baseUrl)
  const openai = yield* FakeOpenAi.FakeOpenAiServer
  openai.reset()
  const profileId = yield* c.addProfile({
    name: `huge-${++names}`,
    provider: "openai-compatible",
    model: "gpt-planner",
    baseUrl: openai.url,
    apiKey: "sk-planner-huge",
    timeoutMs: 20_000
  })
  yield* c.activate(profileId)
  const host = yield* c.addHost()
  yield* c.addTask("fill the form", host.hostId)
  const task = yield* c.claim(host)
  return { c, openai, host, task }
})

const decisionLog = (c: Client, taskId: string) => c.admin.get(`/admin/planner-decisions?taskId=${taskId}`)

/** A click whose arguments carry `bytes` of padding. */
const hugeClick = (bytes: number) =>
  FakeOpenAi.reply.toolCalls([{ name: "click", arguments: JSON.stringify({ x: 1, y: 2, note: "n".repeat(bytes) }) }])

const tooLarge = (res: { status: number; json: any }) => {
  assert.strictEqual(res.status, 502)
  assert.strictEqual(res.json.code, "provider_error")
  assert.strictEqual(res.json.reason, "too_large")
}

describe("planner decisions too large to keep", () => {
  layer(Layer.merge(layerPlannerServer(), FakeOpenAi.FakeOpenAiServer.layer()), { excludeTestServices: true })("default bounds", (it) => {
    it.effect("17 MiB of arguments: 502 too_large, nothing recorded, the decision log readable, the next step index 0", () =>
      Effect.gen(function*() {
        const { c, host, openai, task } = yield* ready
        openai.enqueue(hugeClick(17 * MiB))
        tooLarge(yield* c.decision(host.token, decisionBody(host, task)))

        const log = yield* decisionLog(c, task.taskId)
        assert.strictEqual(log.status, 200, log.text)
        assert.deepStrictEqual(log.json.decisions, [])

        openai.enqueue(FakeOpenAi.reply.toolCalls([{ name: "click", arguments: "{\"x\":1,\"y\":2}" }]))
        const next = yield* c.decision(host.token, decisionBody(host, task))
        assert.strictEqual(next.status, 200, next.text)
        assert.strictEqual(next.json.stepIndex, 0)
        assert.strictEqual((yield* decisionLog(c, task.taskId)).json.decisions.length, 1)
      }))

    it.effect("a prompt the decision log could not hold: 413 naming it, before any provider call", () =>
      Effect.gen(function*() {
        const { c, host, openai, task } = yield* ready
        const res = yield* c.decision(host.token, decisionBody(host, task, { userPrompt: "p".repeat(maxStoredValueBytes + 1) }))
        assert.strictEqual(res.status, 413)
        assert.strictEqual(res.json.code, "payload_too_large")
        assert.include(res.json.error, "userPrompt")
        assert.strictEqual(openai.chatRequests().length, 0)
      }))
  })

  // The read bound raised above the stored one: the decision log's own bound must hold by itself.
  layer(
    Layer.merge(layerPlannerServer(plannerEnv({ LLM_MAX_RESPONSE_BYTES: String(16 * MiB) })), FakeOpenAi.FakeOpenAiServer.layer()),
    { excludeTestServices: true }
  )("a raised LLM_MAX_RESPONSE_BYTES", (it) => {
    it.effect("arguments over what a decision stores: 502 too_large, nothing recorded", () =>
      Effect.gen(function*() {
        const { c, host, openai, task } = yield* ready
        openai.enqueue(hugeClick(maxStoredValueBytes + 1024))
        tooLarge(yield* c.decision(host.token, decisionBody(host, task)))
        const log = yield* decisionLog(c, task.taskId)
        assert.strictEqual(log.status, 200)
        assert.deepStrictEqual(log.json.decisions, [])
      }))
  })
})
