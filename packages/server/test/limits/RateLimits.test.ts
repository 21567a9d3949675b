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
import { FakeOpenAi, makeFakeProvider } from "@switchboard/providers/testing"
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

/** A loopback address of its own (Linux answers all of 127/8): a chat client the limit keys apart from the others. */
const newClient = () => `127.${1 + randomBytes(1)[0]! % 250}.${randomBytes(1)[0]}.${1 + randomBytes(1)[0]! % 250}`

/** A POST from `client`'s address to `base`; a JSON answer checked against the document. */
const postFromAt = (base: string, client: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  rawRequest(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: Buffer.from(JSON.stringify(body)),
    localAddress: client
  }).pipe(Effect.map((raw): RawResponse => {
    const text = raw.body.toString("utf8")
    const contentType = String(raw.headers["content-type"] ?? "")
    const json = contentType.includes("application/json") ? JSON.parse(text) : undefined
    if (json !== undefined) checkDocumented("POST", path, raw.status, contentType, json)
    return { status: raw.status, text, json, contentType, headers: new Headers(raw.headers as Record<string, string>) }
  }))

const postFrom = (client: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  Effect.flatMap(baseUrl, (base) => postFromAt(base, client, path, body, headers))

describe("CHAT_RPM", () => {
  const fake = makeFakeProvider()
  layer(layerTestServer(fake.layer, { CHAT_RPM: "3" }), { excludeTestServices: true })("CHAT_RPM=3, no CHAT_TOKEN", (it) => {
    it.effect("a client's 4th turn within a minute is 429 with retryAfter and Retry-After, and never reaches the provider; another client is served", () =>
      Effect.gen(function*() {
        const [client, other] = [newClient(), newClient()]
        for (let i = 1; i <= 3; i++) {
          const res = yield* postFrom(client, "/api/agent/chat", turn(`turn ${i}`))
          assert.strictEqual(res.status, 200, res.text)
        }
        const callsBefore = fake.calls.length
        const refused = yield* postFrom(client, "/api/agent/chat", turn("one too many"))
        assertRateLimited(refused, "4th turn")
        assert.include(refused.json.error, "CHAT_RPM")
        assert.include(refused.json.error, "client address")
        assert.strictEqual(fake.calls.length, callsBefore, "no provider call for the refused turn")
        // Refused again: a refusal is not a place in the limit, but it does not free one either.
        assertRateLimited(yield* postFrom(client, "/api/agent/chat", turn("again")), "5th turn")

        const served = yield* postFrom(other, "/api/agent/chat", turn("another client"))
        assert.strictEqual(served.status, 200, served.text)
      }))

    it.effect("every route that starts a turn shares the client's limit: streamed, non-streamed, /api/ui/chat; refused before any stream", () =>
      Effect.gen(function*() {
        const client = newClient()
        const plain = yield* postFrom(client, "/api/agent/chat", turn())
        assert.strictEqual(plain.status, 200, plain.text)
        const streamed = yield* postFrom(client, "/api/agent/chat", turn(), { accept: "text/event-stream" })
        assert.strictEqual(streamed.status, 200, streamed.text)
        assert.include(streamed.contentType, "text/event-stream")
        const ui = yield* postFrom(client, "/api/ui/chat", uiTurn(`chat-${randomBytes(4).toString("hex")}`))
        assert.strictEqual(ui.status, 200, ui.text)

        assertRateLimited(yield* postFrom(client, "/api/ui/chat", uiTurn(`chat-${randomBytes(4).toString("hex")}`)), "/api/ui/chat")
        assertRateLimited(yield* postFrom(client, "/api/agent/chat", turn(), { accept: "text/event-stream" }), "streamed /api/agent/chat")
        assertRateLimited(yield* postFrom(client, "/api/agent/chat", { ...turn(), chatId: "limited-chat" }), "with a chatId")
        // Nothing of a refused turn is stored: its chat was never created.
        const messages = yield* request("/api/chats/limited-chat/messages")
        assert.strictEqual(messages.status, 404, messages.text)
        assert.strictEqual(messages.json.code, "chat_not_found")
      }))

    it.effect("a bearer token nobody checks changes nothing: a new one on every request is still the same client", () =>
      Effect.gen(function*() {
        const client = newClient()
        for (let i = 1; i <= 3; i++) {
          assert.strictEqual((yield* postFrom(client, "/api/agent/chat", turn(), bearer(newToken()))).status, 200)
        }
        assertRateLimited(yield* postFrom(client, "/api/agent/chat", turn(), bearer(newToken())), "4th turn, a 4th token")
        // No counter of its own for any of those tokens.
        const buckets = yield* bucketsStored
        assert.isFalse(buckets.some((b) => b.bucket.startsWith("chat:token:")), JSON.stringify(buckets))
      }))

    it.effect("routes that start no turn are not counted", () =>
      Effect.gen(function*() {
        const client = newClient()
        for (let i = 0; i < 5; i++) {
          const res = yield* rawRequest(`${yield* baseUrl}/api/chats/nothing-here/messages`, { localAddress: client })
          assert.strictEqual(res.status, 404)
        }
        const served = yield* postFrom(client, "/api/agent/chat", turn())
        assert.strictEqual(served.status, 200, served.text)
      }))
  })

  const token = newToken()
  layer(layerTestServer(makeFakeProvider().layer, { CHAT_RPM: "3", CHAT_TOKEN: token }), { excludeTestServices: true })(
    "CHAT_RPM=3 with CHAT_TOKEN",
    (it) => {
      it.effect("the checked token is the key, whatever the address: its 4th turn is refused from another client; named by its SHA-256", () =>
        Effect.gen(function*() {
          for (let i = 1; i <= 3; i++) assert.strictEqual((yield* postFrom(newClient(), "/api/agent/chat", turn(), bearer(token))).status, 200)
          const refused = yield* postFrom(newClient(), "/api/agent/chat", turn(), bearer(token))
          assertRateLimited(refused, "4th turn of the token, from a 4th address")
          assert.include(refused.json.error, "bearer token")
          // A wrong token is refused by authentication, and counted nowhere.
          assert.strictEqual((yield* postFrom(newClient(), "/api/agent/chat", turn(), bearer(newToken()))).status, 401)
          const buckets = yield* bucketsStored
          assert.isFalse(buckets.some((b) => b.bucket.includes(token)), JSON.stringify(buckets))
          assert.deepStrictEqual(buckets.map((b) => [b.bucket, b.count]), [[`chat:token:${createHash("sha256").update(token).digest("hex")}`, 3]])
        }))
    }
  )

  layer(layerTestServer(makeFakeProvider().layer), { excludeTestServices: true })("unset", (it) => {
    it.effect("no limit, and nothing counted: the counters' table stays empty", () =>
      Effect.gen(function*() {
        const client = newClient()
        for (let i = 0; i < 8; i++) {
          const res = yield* postFrom(client, "/api/agent/chat", turn(`turn ${i}`))
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
      const token = newToken()
      const [a, b] = yield* startServerPair({ ...env, CHAT_TOKEN: token })
      for (const replica of [a, b, a]) {
        const res = yield* postJsonAt(replica.url, "/api/agent/chat", turn(), bearer(token))
        assert.strictEqual(res.status, 200, res.text)
      }
      assertRateLimited(yield* postJsonAt(b.url, "/api/agent/chat", turn(), bearer(token)), "4th turn, on B")
      assertRateLimited(yield* postJsonAt(a.url, "/api/agent/chat", turn(), bearer(token)), "5th turn, on A")
      assert.strictEqual(fake.chatRequests().length, 3, "the refused turns called no provider")
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

    it.effect("a burst at once: exactly the limit is taken, and every refusal knows the minute is full (its wait is not too short)", () =>
      Effect.gen(function*() {
        const repo = yield* RateLimitsRepo
        const bucket = `burst-${randomBytes(4).toString("hex")}`
        // On PostgreSQL the pool's connections run these at once: a refusal's statement then began
        // before the takes it waited for, and its own snapshot still showed fewer.
        const takes = yield* Effect.all(Array.from({ length: 30 }, () => repo.take(bucket, 10)), { concurrency: "unbounded" })
        const refused = takes.filter((t) => !t.accepted)
        assert.strictEqual(takes.length - refused.length, 10)
        for (const t of refused) {
          assert.isAtLeast(t.current + Math.ceil(t.previous * (60 - t.elapsed) / 60), 10, JSON.stringify(t))
          // Accepted again only once the minute is over: never sooner than its remaining seconds.
          assert.isAtLeast(secondsUntilAccepted(t, 10), Math.floor(60 - t.elapsed), JSON.stringify(t))
        }
      }))
  })
})
