/**
 * Users on two server processes on one PostgreSQL (docs/users.md): a user's daily budget is the same
 * on both — what one replica's call used is in the shared rows before its turn answers, so the other
 * refuses at once — and a chat deleted through one is gone on the other at once.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { FakeOpenAi } from "@switchboard/providers/testing"
import { ADMIN_TOKEN } from "../support/ControlPlane.ts"
import { startServerPair } from "../support/ServerProcess.ts"
import { backend, makeTestDatabase } from "../support/TestDatabase.ts"
import { postJsonAt, requestAt } from "../support/TestServer.ts"

const SECRET = "two-replicas-share-this-hs256-secret"

/** Two replicas with users signed in by HS256; their provider a fake where every call uses 3 + 2 tokens. */
const twoReplicas = (extra: Record<string, string>) =>
  Effect.gen(function*() {
    const db = yield* makeTestDatabase
    const fake = yield* FakeOpenAi.scoped()
    fake.respondWith(() => FakeOpenAi.reply.completion({ content: "hello there" }, { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 }))
    const [a, b] = yield* startServerPair({
      DATABASE_URL: db.url!,
      ADMIN_TOKEN,
      AUTH_JWT_SECRET: SECRET,
      LLM_PROVIDER: "openai-compatible",
      LLM_MODEL: "chat-model",
      LLM_API_KEY: "sk-users-replicas",
      LLM_BASE_URL: fake.url,
      LOG_LEVEL: "info",
      ...extra
    })
    return { a, b, fake }
  })

const tokenFor = (sub: string) =>
  Effect.promise(async () => {
    const { SignJWT } = await import("jose")
    return new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject(sub).setExpirationTime("10m")
      .sign(new TextEncoder().encode(SECRET))
  })

const turnAt = (url: string, token: string, chatId: string, id: string) =>
  postJsonAt(url, "/api/agent/chat", { chatId, messages: [{ id, role: "user", content: `message ${id}`, timestamp: 1 }] }, {
    authorization: `Bearer ${token}`
  })

// PostgreSQL only: the embedded database belongs to one process (its DATA_DIR lock).
describe("users on two server processes on one PostgreSQL", () => {
  it.live.skipIf(backend !== "postgres")(
    "a user's budget is exact across replicas: a call on one is counted on the other before its turn answers",
    () =>
      Effect.gen(function*() {
        const { a, b, fake } = yield* twoReplicas({ USER_DAILY_TOKENS: "10" })
        const alice = yield* tokenFor("alice")
        // 5 tokens on A, then 5 on B: B read A's 5 (under 10), and the turns alternate without waiting.
        assert.strictEqual((yield* turnAt(a.url, alice, "c1", "u1")).status, 200)
        assert.strictEqual((yield* turnAt(b.url, alice, "c1", "u2")).status, 200)
        const calls = fake.chatRequests().length
        for (const replica of [a, b]) {
          const refused = yield* turnAt(replica.url, alice, "c1", `u-${replica.url}`)
          assert.strictEqual(refused.status, 429, refused.text)
          assert.deepInclude(refused.json, { code: "budget_exceeded", limit: 10, used: 10 })
        }
        assert.strictEqual(fake.chatRequests().length, calls, "no provider call past the budget, on either replica")
        // Another user is untouched on both.
        const bob = yield* tokenFor("bob")
        assert.strictEqual((yield* turnAt(b.url, bob, "c1", "b1")).status, 200)

        const report = yield* requestAt(a.url, "/admin/usage?groupBy=user", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
        assert.deepStrictEqual(
          (report.json.rows as Array<{ key: string; calls: number }>).map((r) => [r.key, r.calls]).sort(),
          [["alice", 2], ["bob", 1]]
        )
      }).pipe(Effect.scoped),
    60_000
  )

  it.live.skipIf(backend !== "postgres")(
    "a chat deleted through one replica is gone on the other at once",
    () =>
      Effect.gen(function*() {
        const { a, b } = yield* twoReplicas({})
        const alice = yield* tokenFor("alice")
        const auth = { headers: { authorization: `Bearer ${alice}` } }
        assert.strictEqual((yield* turnAt(a.url, alice, "doomed", "u1")).status, 200)
        assert.strictEqual((yield* turnAt(a.url, alice, "kept", "u2")).status, 200)
        assert.strictEqual((yield* requestAt(b.url, "/api/chats/doomed/messages", auth)).status, 200)

        const deleted = yield* requestAt(b.url, "/api/chats/doomed", { method: "DELETE", ...auth })
        assert.strictEqual(deleted.status, 204, deleted.text)
        assert.strictEqual((yield* requestAt(a.url, "/api/chats/doomed/messages", auth)).status, 404)
        const listed = yield* requestAt(a.url, "/api/chats", auth)
        assert.deepStrictEqual((listed.json.chats as Array<{ chatId: string }>).map((c) => c.chatId), ["kept"])
        // Deleted once: the second delete, through A, finds nothing.
        assert.strictEqual((yield* requestAt(a.url, "/api/chats/doomed", { method: "DELETE", ...auth })).status, 404)
        // A new turn with that id starts a new chat, holding nothing of the old one.
        assert.strictEqual((yield* turnAt(a.url, alice, "doomed", "u3")).status, 200)
        const fresh = yield* requestAt(b.url, "/api/chats/doomed/messages", auth)
        assert.deepStrictEqual(
          (fresh.json.messages as Array<{ role: string; content: string }>).filter((m) => m.role === "user").map((m) => m.content),
          ["message u3"]
        )
      }).pipe(Effect.scoped),
    60_000
  )
})
