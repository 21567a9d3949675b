/**
 * Usage and budgets across replicas (docs/usage.md): two server processes on
 * one PostgreSQL. What one replica counts reaches the shared rows, so the
 * other reports it and refuses a host whose budget the first used up; a
 * replica stopped cleanly (SIGTERM) flushes what it counted before it exits.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { FakeOpenAi } from "@switchboard/providers/testing"
import { ADMIN_TOKEN, client, decisionBody, newCredentialKey } from "../support/ControlPlane.ts"
import { eventually } from "../support/JobsHelpers.ts"
import { startServerPair } from "../support/ServerProcess.ts"
import { backend, makeTestDatabase } from "../support/TestDatabase.ts"
import { postJsonAt, requestAt } from "../support/TestServer.ts"

/** Two replicas on a scratch database; their provider a fake where every call uses 3 input and 2 output tokens. */
const twoReplicas = Effect.gen(function*() {
  const db = yield* makeTestDatabase
  const fake = yield* FakeOpenAi.scoped()
  const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 }
  fake.respondWith((request) =>
    (request.body as { tool_choice?: unknown }).tool_choice === "required"
      ? FakeOpenAi.reply.completion({ toolCalls: [{ name: "click", arguments: "{\"x\":1,\"y\":2}" }] }, usage)
      : FakeOpenAi.reply.completion({ content: "hello there" }, usage)
  )
  const env = {
    DATABASE_URL: db.url!,
    ADMIN_TOKEN,
    CREDENTIAL_KEY: newCredentialKey(),
    LLM_PROVIDER: "openai-compatible",
    LLM_MODEL: "chat-model",
    LLM_API_KEY: "sk-usage-replicas",
    LLM_BASE_URL: fake.url,
    LOG_LEVEL: "info"
  }
  const [a, b] = yield* startServerPair(env)
  return { a, b, fake }
})

// PostgreSQL only: the embedded database belongs to one process (its DATA_DIR lock).
describe("usage on two server processes on one PostgreSQL", () => {
  it.live.skipIf(backend !== "postgres")(
    "a budget used up on one replica is refused on the other, and either reports the calls",
    () =>
      Effect.gen(function*() {
        const { a, b, fake } = yield* twoReplicas
        const onA = client(a.url)
        const onB = client(b.url)
        const { host, task } = yield* onA.readyHost(fake.url, { host: "shared" })
        const budget = yield* requestAt(b.url, `/admin/hosts/${host.hostId}/budget`, {
          method: "PUT",
          headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
          body: JSON.stringify({ dailyTokens: 10 })
        })
        assert.strictEqual(budget.status, 200, budget.text)

        // Set on B, applied by A: 0 and 5 tokens are under 10.
        for (let step = 0; step < 2; step++) {
          assert.strictEqual((yield* onA.decision(host.token, decisionBody(host, task))).status, 200)
        }
        // B sees A's tokens once A flushed them (about a second), then refuses without calling the provider.
        yield* eventually(
          Effect.map(onB.admin.get(`/admin/hosts/${host.hostId}/budget`), (r) => r.json.usedTokens as number),
          (used) => used >= 10,
          "replica B reading replica A's tokens"
        )
        const calls = fake.chatRequests().length
        const refused = yield* onB.decision(host.token, decisionBody(host, task))
        assert.strictEqual(refused.status, 429, refused.text)
        assert.deepInclude(refused.json, { code: "budget_exceeded", limit: 10, used: 10 })
        assert.strictEqual(refused.headers.get("retry-after"), String(refused.json.retryAfter))
        assert.strictEqual(fake.chatRequests().length, calls, "no provider call for it")

        const report = yield* onB.admin.get(`/admin/usage?groupBy=host&hostId=${host.hostId}`)
        assert.deepStrictEqual(report.json.rows, [{ key: host.hostId, calls: 2, inputTokens: 6, outputTokens: 4, cachedInputTokens: 0 }])
      }).pipe(Effect.scoped),
    60_000
  )

  it.live.skipIf(backend !== "postgres")(
    "a replica stopped with SIGTERM flushes its counts before it exits",
    () =>
      Effect.gen(function*() {
        const { a, b } = yield* twoReplicas
        const turn = yield* postJsonAt(a.url, "/api/agent/chat", {
          chatId: "usage-sigterm",
          messages: [{ id: "u1", role: "user", content: "hi", timestamp: 1 }]
        })
        assert.strictEqual(turn.status, 200, turn.text)
        a.child.kill("SIGTERM")
        assert.strictEqual(yield* Effect.promise(() => a.exited), 0, a.output())
        // No waiting: A flushed before it let go of the database.
        const report = yield* client(b.url).admin.get("/admin/usage?chatId=usage-sigterm&groupBy=model")
        assert.deepStrictEqual(report.json.rows, [{ key: "chat-model", calls: 1, inputTokens: 3, outputTokens: 2, cachedInputTokens: 0 }])
      }).pipe(Effect.scoped),
    60_000
  )
})
