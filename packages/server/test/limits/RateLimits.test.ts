/**
 * The shared rate limits over real HTTP (docs/configuration.md, "Rate limits"): `CHAT_RPM` per
 * bearer token or client address on every route that starts a chat turn, `PLANNER_HOST_RPM` per
 * host on the planner decision. The request over the limit is a 429 `rate_limited` with
 * `retryAfter` and `Retry-After`, and does nothing; unset, nothing is counted at all; the counters
 * are the database's, so two server processes on one PostgreSQL share them.
 *
 * No test waits for a minute to pass: each sends its requests back to back (the limit looks at the
 * last 60 seconds, so a minute boundary between them changes nothing).
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { createHash, randomBytes } from "node:crypto"
import * as FakeOpenAi from "@switchboard/providers/testing/FakeOpenAi"
import { makeFakeProvider } from "@switchboard/providers/testing/FakeProvider"
import { secondsUntilAccepted } from "../../src/limits/RateLimits.ts"
import { RateLimitsRepo } from "../../src/limits/RateLimitsRepo.ts"
import { client, decisionBody, layerPlannerServer, plannerEnv } from "../support/ControlPlane.ts"
import { checkDocumented } from "../support/DocumentedResponses.ts"
import { rawRequest } from "../support/RawHttp.ts"
import { startServerPair } from "../support/ServerProcess.ts"
import { backend, makeTestDatabase, TestDatabase } from "../support/TestDatabase.ts"
import { baseUrl, layerTestServer, postJson, postJsonAt, request } from "../support/TestServer.ts"
import type { RawResponse } from "../support/TestServer.ts"

const user = (id: string, content: string) => ({ id, role: "user", content, timestamp: 1_700_000_000_000 })
const turn = (text = "hello") => ({ messages: [user(`u-${randomBytes(4).toString("hex")}`, text)] })
const uiTurn = (chatId: string) => ({
  id: chatId,
  messages: [{ id: `m-${randomBytes(4).toString("hex")}`, role: "user", parts: [{ type: "text", text: "hello" }] }]
})
const newToken = () => `tok-${randomBytes(12).toString("hex")}`
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** The contract's refusal: 429, `{ error, code: "rate_limited", retryAfter }`, and the same seconds in `Retry-After`. */
const assertRateLimited = (res: RawResponse, what: string) => {
  assert.strictEqual(res.status, 429, `${what}: ${res.text}`)
  assert.strictEqual(res.json.code, "rate_limited", what)
  assert.isString(res.json.error, what)
  assert.isTrue(Number.isInteger(res.json.retryAfter) && res.json.retryAfter >= 1 && res.json.retryAfter <= 120, `${what}: ${res.text}`)
  assert.strictEqual(res.headers.get("retry-after"), String(res.json.retryAfter), what)
  assert.include(res.headers.get("content-type") ?? "", "application/json", what)
}

const bucketsStored = SqlClient.SqlClient.use((sql) => sql<{ bucket: string; count: number }>`SELECT bucket, count FROM rate_limits`).pipe(
  Effect.orDie
)

describe("CHAT_RPM", () => {
  const fake = makeFakeProvider()
  layer(layerTestServer(fake.layer, { CHAT_RPM: "3" }), { excludeTestServices: true })("CHAT_RPM=3", (it) => {
    it.effect("a bearer token's 4th turn within a minute is 429 with retryAfter and Retry-After, and never reaches the provider; another token is served", () =>
      Effect.gen(function*() {
        const [token, other] = [newToken(), newToken()]
        for (let i = 1; i <= 3; i++) {
          const res = yield* postJson("/api/agent/chat", turn(`turn ${i}`), bearer(token))
          assert.strictEqual(res.status, 200, res.text)
        }
        const callsBefore = fake.calls.length
        const refused = yield* postJson("/api/agent/chat", turn("one too many"), bearer(token))
        assertRateLimited(refused, "4th turn")
        assert.include(refused.json.error, "CHAT_RPM")
        assert.strictEqual(fake.calls.length, callsBefore, "no provider call for the refused turn")
        // Refused again: a refusal is not a place in the limit, but it does not free one either.
        assertRateLimited(yield* postJson("/api/agent/chat", turn("again"), bearer(token)), "5th turn")

        const served = yield* postJson("/api/agent/chat", turn("another token"), bearer(other))
        assert.strictEqual(served.status, 200, served.text)
      }))

    it.effect("every route that starts a turn shares the token's limit: streamed, non-streamed, /api/ui/chat; refused before any stream", () =>
      Effect.gen(function*() {
        const token = newToken()
        const plain = yield* postJson("/api/agent/chat", turn(), bearer(token))
        assert.strictEqual(plain.status, 200, plain.text)
        const streamed = yield* postJson("/api/agent/chat", turn(), { ...bearer(token), accept: "text/event-stream" })
        assert.strictEqual(streamed.status, 200, streamed.text)
        assert.include(streamed.contentType, "text/event-stream")
        const ui = yield* postJson("/api/ui/chat", uiTurn(`chat-${randomBytes(4).toString("hex")}`), bearer(token))
        assert.strictEqual(ui.status, 200, ui.text)

        assertRateLimited(yield* postJson("/api/ui/chat", uiTurn(`chat-${randomBytes(4).toString("hex")}`), bearer(token)), "/api/ui/chat")
        assertRateLimited(
          yield* postJson("/api/agent/chat", turn(), { ...bearer(token), accept: "text/event-stream" }),
          "streamed /api/agent/chat"
        )
        assertRateLimited(yield* postJson("/api/agent/chat", { ...turn(), chatId: "limited-chat" }, bearer(token)), "with a chatId")
        // Nothing of a refused turn is stored: its chat was never created.
        const messages = yield* request("/api/chats/limited-chat/messages", { headers: bearer(token) })
        assert.strictEqual(messages.status, 404, messages.text)
        assert.strictEqual(messages.json.code, "chat_not_found")
      }))

    it.effect("without a token the client's address is the key: the 4th turn from 127.0.0.1 is refused, 127.0.0.2 is served", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const post = (localAddress: string) =>
          rawRequest(`${base}/api/agent/chat`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: Buffer.from(JSON.stringify(turn())),
            localAddress
          }).pipe(Effect.map((raw) => {
            const text = raw.body.toString("utf8")
            const json = JSON.parse(text)
            const contentType = String(raw.headers["content-type"] ?? "")
            checkDocumented("POST", "/api/agent/chat", raw.status, contentType, json)
            return { status: raw.status, text, json, contentType, headers: new Headers(raw.headers as Record<string, string>) }
          }))
        for (let i = 1; i <= 3; i++) assert.strictEqual((yield* post("127.0.0.1")).status, 200)
        assertRateLimited(yield* post("127.0.0.1"), "4th turn from 127.0.0.1")
        const elsewhere = yield* post("127.0.0.2")
        assert.strictEqual(elsewhere.status, 200, elsewhere.text)
        // A bearer token is its own key, whatever the address.
        const withToken = yield* postJson("/api/agent/chat", turn(), bearer(newToken()))
        assert.strictEqual(withToken.status, 200, withToken.text)
      }))

    it.effect("the counters name a token by its SHA-256, never the token itself", () =>
      Effect.gen(function*() {
        const token = newToken()
        assert.strictEqual((yield* postJson("/api/agent/chat", turn(), bearer(token))).status, 200)
        const buckets = yield* bucketsStored
        assert.isFalse(buckets.some((b) => b.bucket.includes(token)), JSON.stringify(buckets))
        const hashed = buckets.find((b) => b.bucket === `chat:token:${createHash("sha256").update(token).digest("hex")}`)
        assert.strictEqual(hashed?.count, 1)
      }))

    it.effect("routes that start no turn are not counted", () =>
      Effect.gen(function*() {
        const token = newToken()
        for (let i = 0; i < 5; i++) {
          const res = yield* request("/api/chats/nothing-here/messages", { headers: bearer(token) })
          assert.strictEqual(res.status, 404, res.text)
        }
        const served = yield* postJson("/api/agent/chat", turn(), bearer(token))
        assert.strictEqual(served.status, 200, served.text)
      }))
  })

  layer(layerTestServer(makeFakeProvider().layer), { excludeTestServices: true })("unset", (it) => {
    it.effect("no limit, and nothing counted: the counters' table stays empty", () =>
      Effect.gen(function*() {
        const token = newToken()
        for (let i = 0; i < 8; i++) {
          const res = yield* postJson("/api/agent/chat", turn(`turn ${i}`), bearer(token))
          assert.strictEqual(res.status, 200, res.text)
        }
        assert.deepStrictEqual(yield* bucketsStored, [])
      }))
  })
})

describe("PLANNER_HOST_RPM", () => {
  const env = plannerEnv({ PLANNER_HOST_RPM: "2" })
  layer(Layer.mergeAll(layerPlannerServer(env), FakeOpenAi.FakeOpenAiServer.layer()), { excludeTestServices: true })("PLANNER_HOST_RPM=2", (it) => {
    it.effect("a host's 3rd decision within a minute is 429 after its token is checked, calls no provider and persists nothing; another host is served", () =>
      Effect.gen(function*() {
        const c = client(yield* baseUrl)
        const openai = yield* FakeOpenAi.FakeOpenAiServer
        openai.respondWith(() => FakeOpenAi.reply.toolCalls([{ name: "click", arguments: "{\"x\":1,\"y\":2}" }]))
        const { host, task } = yield* c.readyHost(openai.url, { host: "limited" })
        const other = yield* c.addHost("other")
        yield* c.addTask("another task", other.hostId)
        const otherTask = yield* c.claim(other)

        for (const step of [0, 1]) {
          const res = yield* c.decision(host.token, decisionBody(host, task))
          assert.strictEqual(res.status, 200, res.text)
          assert.strictEqual(res.json.stepIndex, step)
        }
        const calls = openai.chatRequests().length
        const refused = yield* c.decision(host.token, decisionBody(host, task))
        assertRateLimited(refused, "3rd decision")
        assert.include(refused.json.error, "PLANNER_HOST_RPM")
        assert.strictEqual(openai.chatRequests().length, calls, "no provider call")
        const log = yield* c.admin.get(`/admin/planner-decisions?taskId=${task.taskId}`)
        assert.deepStrictEqual(log.json.decisions.map((d: { stepIndex: number }) => d.stepIndex), [0, 1], "nothing persisted")

        // Authentication and the host binding come first: a bad token is a 401, another host's id a 403.
        const unknown = yield* c.decision("sbh_nobody", decisionBody(host, task))
        assert.strictEqual(unknown.status, 401, unknown.text)
        const foreign = yield* c.decision(host.token, decisionBody(other, otherTask))
        assert.strictEqual(foreign.status, 403, foreign.text)

        const served = yield* c.decision(other.token, decisionBody(other, otherTask))
        assert.strictEqual(served.status, 200, served.text)
        assert.strictEqual(served.json.stepIndex, 0)
      }))
  })
})

describe("the wait a refusal announces", () => {
  it("is when the estimate over the last minute falls below the limit", () => {
    // Full this minute, nothing before: the next minute, once a third of it has passed (3 × 40/60 = 2 < 3).
    assert.strictEqual(secondsUntilAccepted({ accepted: false, current: 3, previous: 0, elapsed: 10 }, 3), 50 + 20)
    // The previous minute's 6 in the way of a limit of 3 with 1 taken now: until 6 × (60 − t)/60 ≤ 1, t = 50.
    assert.strictEqual(secondsUntilAccepted({ accepted: false, current: 1, previous: 6, elapsed: 20 }, 3), 30)
    // Never 0: a client told to come back at once would only be refused again.
    assert.strictEqual(secondsUntilAccepted({ accepted: false, current: 1, previous: 6, elapsed: 50 }, 3), 1)
  })
})

// PostgreSQL only: the embedded database belongs to one process (its DATA_DIR lock).
describe("two server processes on one PostgreSQL", () => {
  it.live.skipIf(backend !== "postgres")("share the limit: the 4th turn of a token is refused by whichever process gets it", () =>
    Effect.gen(function*() {
      const db = yield* makeTestDatabase
      const fake = yield* FakeOpenAi.scoped()
      fake.respondWith(() => FakeOpenAi.reply.text("hello from the fake"))
      const env = {
        DATABASE_URL: db.url!,
        CHAT_RPM: "3",
        LLM_PROVIDER: "openai-compatible",
        LLM_MODEL: "teacher-model",
        LLM_API_KEY: "sk-limits-test",
        LLM_BASE_URL: fake.url,
        LOG_LEVEL: "info"
      }
      const [a, b] = yield* startServerPair(env)
      const token = newToken()
      for (const replica of [a, b, a]) {
        const res = yield* postJsonAt(replica.url, "/api/agent/chat", turn(), bearer(token))
        assert.strictEqual(res.status, 200, res.text)
      }
      assertRateLimited(yield* postJsonAt(b.url, "/api/agent/chat", turn(), bearer(token)), "4th turn, on B")
      assertRateLimited(yield* postJsonAt(a.url, "/api/agent/chat", turn(), bearer(token)), "5th turn, on A")
      assert.strictEqual(fake.chatRequests().length, 3, "the refused turns called no provider")
      const other = yield* postJsonAt(b.url, "/api/agent/chat", turn(), bearer(newToken()))
      assert.strictEqual(other.status, 200, other.text)
    }).pipe(Effect.scoped), 60_000)
})

describe("the counters' table", () => {
  layer(RateLimitsRepo.layer.pipe(Layer.provideMerge(TestDatabase)), { excludeTestServices: true })("stays small", (it) => {
    it.effect("the sweep deletes the minutes no request reads any more, and keeps the current and the previous one", () =>
      Effect.gen(function*() {
        const repo = yield* RateLimitsRepo
        const sql = yield* SqlClient.SqlClient
        // One transaction: one now() for every statement, whatever minute the test runs in.
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO rate_limits (bucket, window_start, count) VALUES
            ('old', date_trunc('minute', now()) - interval '5 minutes', 7),
            ('old', date_trunc('minute', now()) - interval '3 minutes', 7),
            ('recent', date_trunc('minute', now()) - interval '1 minute', 2)`
          const taken = yield* repo.take("recent", 10)
          assert.isTrue(taken.accepted)
          assert.strictEqual(taken.previous, 2)
          assert.strictEqual(yield* repo.prune, 2)
          const left = yield* sql<{ bucket: string }>`SELECT bucket FROM rate_limits ORDER BY window_start`
          assert.deepStrictEqual(left.map((r) => r.bucket), ["recent", "recent"])
        }))
      }))
  })
})
