/**
 * One replica serves every turn it admits at once (docs/configuration.md, "Concurrency"): nothing
 * between a turn and its provider — socket pool, queue, lock, database connection — makes it wait
 * for another turn's provider call; past `MAX_CONCURRENT_TURNS` a turn is refused at once.
 *
 * No clock decides anything here. The provider fakes hold every request until they have seen the
 * whole burst open at once, and only then answer: with any cap below the burst they never see it,
 * nothing is answered, and the test fails by its own timeout.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import * as ProviderConfig from "@switchboard/providers"
import { FakeOpenAi } from "@switchboard/providers/testing"
import type { FakeReply, RecordedRequest } from "@switchboard/providers/testing"
import { client, layerPlannerServer, plannerEnv } from "../support/ControlPlane.ts"
import { readEventStream, streamedText, streamInit } from "../support/EventStream.ts"
import { eventually, settled, user } from "../support/JobsHelpers.ts"
import { paced } from "../support/PacedProvider.ts"
import { backend } from "../support/TestDatabase.ts"
import { baseUrl, layerTestServer, postJson, request } from "../support/TestServer.ts"
import type { RawResponse } from "../support/TestServer.ts"

const BURST = 300

/**
 * A gate that opens once `count` requests have arrived (each held until then), and the reply each
 * gets when it opens. Requests past the count are answered at once.
 */
const holdUntil = (fake: FakeOpenAi.FakeOpenAi, count: number, answer: (request: RecordedRequest) => FakeReply) => {
  let arrived = 0
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  fake.respondWith((request) => {
    arrived++
    if (arrived >= count) open()
    return FakeOpenAi.reply.after(opened, answer(request))
  })
  return { opened, arrived: () => arrived }
}

const llmEnv = (url: string, extra: Record<string, string> = {}) => ({
  LLM_PROVIDER: "openai-compatible",
  LLM_MODEL: "scale-model",
  LLM_API_KEY: "sk-scale",
  LLM_BASE_URL: url,
  ...extra
})

const serverOverFake = (env: Record<string, string> = {}, jobs: { concurrency?: number } = {}) =>
  Layer.unwrap(Effect.gen(function*() {
    const fake = yield* FakeOpenAi.FakeOpenAiServer
    return layerTestServer(ProviderConfig.layer, llmEnv(fake.url, env), { jobs })
  })).pipe(Layer.provideMerge(FakeOpenAi.FakeOpenAiServer.layer({ streaming: { textDeltas: 4 } })))

/** Assistant messages stored per chat, for the chats whose id starts with `prefix`. */
const answersStored = (prefix: string) =>
  SqlClient.SqlClient.use((sql) =>
    sql<{ chatId: string; n: number }>`SELECT chat_id AS "chatId", count(*)::int AS n FROM chat_messages
      WHERE role = 'assistant' AND chat_id LIKE ${`${prefix}%`} GROUP BY chat_id`
  ).pipe(Effect.orDie, Effect.map((rows) => new Map(rows.map((r) => [r.chatId, r.n]))))

const lastUser = (request: RecordedRequest) => {
  const messages = (request.body as { messages?: Array<{ role: string; content?: unknown }> }).messages ?? []
  const last = [...messages].reverse().find((m) => m.role === "user")
  return typeof last?.content === "string" ? last.content : ""
}

const ids = (prefix: string) => Array.from({ length: BURST }, (_, i) => `${prefix}${i}`)

describe(`a replica serves its users at once (${backend})`, () => {
  layer(serverOverFake(), { excludeTestServices: true })("no hidden cap", (it) => {
    it.effect(`${BURST} streamed turns at once: the provider sees them all open, each completes and is stored once`, () =>
      Effect.gen(function*() {
        const fake = yield* FakeOpenAi.FakeOpenAiServer
        const gate = holdUntil(fake, BURST, (request) => FakeOpenAi.reply.text(`answer to ${lastUser(request)}`))
        const base = yield* baseUrl
        const reads = yield* Effect.forEach(
          ids("burst-s-"),
          (chatId) => readEventStream(`${base}/api/agent/chat`, streamInit({ chatId, messages: [user(`u-${chatId}`, chatId)] })),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(gate.arrived(), BURST)
        for (const [i, read] of reads.entries()) {
          assert.strictEqual(read.status, 200, JSON.stringify(read.json))
          assert.isTrue(read.done, `stream ${i} ended with [DONE]`)
          assert.strictEqual(read.chunks.at(-1)?.type, "finish")
          assert.strictEqual(streamedText(read.chunks), `answer to burst-s-${i}`)
        }
        const stored = yield* answersStored("burst-s-")
        assert.strictEqual(stored.size, BURST)
        for (const n of stored.values()) assert.strictEqual(n, 1)
      }), 120_000)

    it.effect(`${BURST} plain turns at once: the same`, () =>
      Effect.gen(function*() {
        const fake = yield* FakeOpenAi.FakeOpenAiServer
        fake.reset()
        const gate = holdUntil(fake, BURST, (request) => FakeOpenAi.reply.text(`answer to ${lastUser(request)}`))
        const answers = yield* Effect.forEach(
          ids("burst-j-"),
          (chatId) => postJson("/api/agent/chat", { chatId, messages: [user(`u-${chatId}`, chatId)] }),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(gate.arrived(), BURST)
        for (const [i, answer] of answers.entries()) {
          assert.strictEqual(answer.status, 200, answer.text)
          assert.strictEqual(answer.json.content, `answer to burst-j-${i}`)
        }
        const stored = yield* answersStored("burst-j-")
        assert.strictEqual(stored.size, BURST)
        for (const n of stored.values()) assert.strictEqual(n, 1)
      }), 120_000)
  })

  layer(
    Layer.mergeAll(layerPlannerServer(plannerEnv()), FakeOpenAi.FakeOpenAiServer.layer()),
    { excludeTestServices: true }
  )("planner decisions", (it) => {
    it.effect(`${BURST} decisions from ${BURST} hosts at once: all answered`, () =>
      Effect.gen(function*() {
        const fake = yield* FakeOpenAi.FakeOpenAiServer
        const gate = holdUntil(fake, BURST, () => FakeOpenAi.reply.toolCalls([{ name: "click", arguments: "{\"x\":1}" }]))
        const ops = client(yield* baseUrl)
        // One profile for all: `readyHost` would make a new one active each time.
        const first = yield* ops.readyHost(fake.url, { host: "host-0" })
        const hosts = [first, ...yield* Effect.forEach(Array.from({ length: BURST - 1 }, (_, i) => i + 1), (i) =>
          Effect.gen(function*() {
            const host = yield* ops.addHost(`host-${i}`)
            const taskId = yield* ops.addTask(`goal ${i}`, host.hostId)
            const task = yield* ops.claim(host)
            assert.strictEqual(task.taskId, taskId)
            return { host, task }
          }), { concurrency: 8 })]
        const decisions = yield* Effect.forEach(hosts, ({ host, task }) =>
          ops.decision(host.token, {
            hostId: host.hostId,
            taskId: task.taskId,
            attempt: task.attempt,
            systemPrompt: "You operate a browser.",
            userPrompt: "Click the button.",
            tools: [{ name: "click", description: "Click", parameters: { type: "object", properties: { x: { type: "number" } } } }]
          }), { concurrency: "unbounded" })
        assert.strictEqual(gate.arrived(), BURST)
        for (const decision of decisions) {
          assert.strictEqual(decision.status, 200, decision.text)
          assert.strictEqual(decision.json.toolName, "click")
        }
      }), 120_000)
  })

  layer(serverOverFake({ JOB_MODEL_RESEARCH: "job-model" }, { concurrency: 200 }), { excludeTestServices: true })(
    "background work never takes a user's place",
    (it) => {
      it.effect("50 chat turns start while 200 sub-agent steps hold their provider calls: every turn reaches the provider first", () =>
        Effect.gen(function*() {
          const fake = yield* FakeOpenAi.FakeOpenAiServer
          const jobs = 200
          const isJob = (r: RecordedRequest) => (r.body as { model?: string }).model === "job-model"
          // Job steps are held until the chat turns are answered; the dispatching and later turns answer at once.
          let release!: () => void
          const released = new Promise<void>((resolve) => (release = resolve))
          fake.respondWith((request) => {
            if (isJob(request)) return FakeOpenAi.reply.after(released, FakeOpenAi.reply.text("the brief"))
            const said = lastUser(request)
            return said.startsWith("dispatch")
              ? FakeOpenAi.reply.toolCalls([{ id: `call-${said}`, name: "research", arguments: JSON.stringify({ question: said }) }], "on it")
              : FakeOpenAi.reply.text(`answer to ${said}`)
          })
          const dispatch = Array.from({ length: jobs }, (_, i) => `dispatch-${i}`)
          yield* Effect.forEach(dispatch, (chatId) =>
            postJson("/api/agent/chat", { chatId, messages: [user(`u-${chatId}`, chatId)] }).pipe(
              Effect.tap((r) => Effect.sync(() => assert.strictEqual(r.status, 200, r.text)))
            ), { concurrency: 20 })
          // Every job's first step is at the provider, held.
          yield* eventually(Effect.sync(() => fake.chatRequests().filter(isJob).length), (n) => n === jobs, "200 job steps in flight")
          const before = fake.chatRequests().length
          const turns = yield* Effect.forEach(Array.from({ length: 50 }, (_, i) => `user-${i}`), (chatId) =>
            postJson("/api/agent/chat", { chatId, messages: [user(`u-${chatId}`, chatId)] }), { concurrency: "unbounded" })
          for (const turn of turns) assert.strictEqual(turn.status, 200, turn.text)
          const arrivals = fake.chatRequests().slice(before)
          const firstJobStep = arrivals.findIndex(isJob)
          const lastTurn = arrivals.findLastIndex((r) => lastUser(r).startsWith("user-"))
          assert.strictEqual(arrivals.filter((r) => lastUser(r).startsWith("user-")).length, 50)
          assert.isTrue(firstJobStep === -1 || firstJobStep > lastTurn, "no job step queued after the turns got ahead of them")
          release()
          // The jobs then finish and are steered back, each once: 200 steps and wake turns on two
          // busy cores take a while (on the embedded database, one session, over a minute when the
          // machine runs more beside the test), so the wait is the test's whole budget, not a chat's.
          yield* Effect.forEach(dispatch, (chatId) => settled(chatId, 1, 240_000), { concurrency: 20 })
        }), 300_000)
    }
  )

  const slow = paced()
  layer(layerTestServer(slow.layer, { MAX_CONCURRENT_TURNS: "5" }), { excludeTestServices: true })(
    "MAX_CONCURRENT_TURNS=5",
    (it) => {
      it.effect("the 6th turn in flight is refused at once with 503 overloaded and Retry-After, storing nothing; a place freed is taken again", () =>
        Effect.gen(function*() {
          // Turns that stream until they are stopped (a minute of pieces).
          slow.state.pieces = Array.from({ length: 600 }, () => "x ")
          slow.state.gapMs = 100
          const base = yield* baseUrl
          const running = Array.from({ length: 5 }, (_, i) => `held-${i}`)
          yield* Effect.forEach(running, (chatId) =>
            readEventStream(`${base}/api/agent/chat`, streamInit({ chatId, messages: [user(`u-${chatId}`, "hi")] }), () => true),
            { concurrency: "unbounded" })
          const streamedRefusal = yield* readEventStream(`${base}/api/agent/chat`, streamInit({ chatId: "sixth", messages: [user("u-sixth", "hi")] }))
          const refusals: Array<{ status: number; json: any; retryAfter: string | null }> = [
            ...[
              yield* postJson("/api/agent/chat", { chatId: "sixth", messages: [user("u-sixth", "hi")] }),
              yield* postJson("/api/agent/chat", { messages: [user("u-plain", "hi")] }),
              yield* postJson("/api/ui/chat", { id: "sixth", messages: [{ id: "u-sixth", role: "user", parts: [{ type: "text", text: "hi" }] }] })
            ].map((r: RawResponse) => ({ status: r.status, json: r.json, retryAfter: r.headers.get("retry-after") })),
            { status: streamedRefusal.status, json: streamedRefusal.json, retryAfter: streamedRefusal.headers.get("retry-after") }
          ]
          for (const refused of refusals) {
            assert.strictEqual(refused.status, 503, JSON.stringify(refused.json))
            assert.strictEqual(refused.json.code, "overloaded")
            assert.isTrue(Number.isInteger(refused.json.retryAfter) && refused.json.retryAfter >= 1)
            assert.strictEqual(refused.retryAfter, String(refused.json.retryAfter))
            assert.include(refused.json.error, "MAX_CONCURRENT_TURNS")
          }
          const stored = yield* SqlClient.SqlClient.use((sql) =>
            sql<{ n: number }>`SELECT (SELECT count(*) FROM chats WHERE id = 'sixth')::int + (SELECT count(*) FROM chat_messages WHERE chat_id = 'sixth')::int AS n`
          ).pipe(Effect.orDie)
          assert.strictEqual(stored[0]!.n, 0, "a refused turn stores nothing")
          const metrics = (yield* request("/metrics")).text
          assert.match(metrics, /^switchboard_in_flight\{kind="turn"\} 5$/m)
          assert.match(metrics, /^switchboard_overloaded_total\{kind="turn"\} 4$/m)
          // One turn ends: its place is free, and the next turn is accepted.
          const stop = yield* postJson("/api/chats/held-0/stop", {})
          assert.strictEqual(stop.json.stopped, true)
          const next = yield* readEventStream(`${base}/api/agent/chat`, streamInit({ chatId: "sixth", messages: [user("u-sixth", "hi")] }), () => true)
          assert.strictEqual(next.status, 200)
          for (const chatId of [...running.slice(1), "sixth"]) yield* postJson(`/api/chats/${chatId}/stop`, {})
        }))
    }
  )
})
