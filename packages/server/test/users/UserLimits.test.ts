/**
 * Per-user limits over HTTP (docs/users.md, "Limits per user"): `USER_DAILY_TOKENS` refuses a user's
 * turn before anything is stored or the provider is called, and a job of that user at its next
 * provider call; `CHAT_RPM` counts per user once users are vouched for; `GET /admin/usage?groupBy=user`.
 */
import { assert, describe, layer } from "@effect/vitest"
import type { ChatMessage, JobRecord, ProviderChatResponse } from "@switchboard/domain"
import { Deferred, Effect } from "effect"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { providerFailureNote } from "../../src/jobs/subagents/ToolLoop.ts"
import { readEventStream, streamInit } from "../support/EventStream.ts"
import { oneCallResearcher } from "../support/FakeSubagents.ts"
import { eventually, teacher } from "../support/JobsHelpers.ts"
import { baseUrl, layerTestServer, postJson, request } from "../support/TestServer.ts"

const ADMIN_TOKEN = "user-limits-admin"
const BACKEND = "user-limits-backend"
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }
/** A trusted backend acting for `user`: the user is vouched for. */
const as = (user: string) => ({ authorization: `Bearer ${BACKEND}`, "x-switchboard-user": user })
const user = (id: string, content: string): ChatMessage => ({ id, role: "user", content, timestamp: 1_700_000_000_000 })

/** Every call uses 10 + 5 tokens. */
const withUsage = (response: ProviderChatResponse): ProviderChatResponse => ({ ...response, usage: { inputTokens: 10, outputTokens: 5 } })

/**
 * A research sub-agent asking the provider once (its own model) — once the dispatching turn has
 * answered: a job runs beside its turn's next round, and the test wants the turn's 30 tokens used
 * before the job asks (otherwise which of the two is refused is a race).
 */
const turnAnswered = Deferred.makeUnsafe<void>()
const researcher = oneCallResearcher(providerFailureNote, Deferred.await(turnAnswered))

describe("per-user limits", () => {
  const fake = makeFakeProvider()
  layer(
    layerTestServer(fake.layer, { ADMIN_TOKEN, CHAT_TOKEN: BACKEND, USER_DAILY_TOKENS: "30" }, { subagents: researcher }),
    { excludeTestServices: true }
  )("USER_DAILY_TOKENS=30", (it) => {
    it.effect("a user over the budget is refused before anything is stored or called; others are not", () =>
      Effect.gen(function*() {
        fake.answerWith((params) => Effect.succeed(withUsage({ content: `answer ${params.messages.length}` })))
        for (const [i, text] of ["one", "two"].entries()) {
          const turn = yield* postJson("/api/agent/chat", { chatId: "budget", messages: [user(`a${i}`, text)] }, as("alice"))
          assert.strictEqual(turn.status, 200, turn.text)
        }
        const calls = fake.calls.length
        const refused = yield* postJson("/api/agent/chat", { chatId: "budget", messages: [user("a2", "three")] }, as("alice"))
        assert.strictEqual(refused.status, 429, refused.text)
        assert.deepInclude(refused.json, { code: "budget_exceeded", limit: 30, used: 30 })
        assert.include(refused.json.error, "USER_DAILY_TOKENS")
        assert.strictEqual(refused.headers.get("retry-after"), String(refused.json.retryAfter))
        assert.isAtLeast(refused.json.retryAfter, 1)

        // Streamed, and through the AI SDK's route: the same JSON refusal, before any stream.
        const base = yield* baseUrl
        const streamed = yield* readEventStream(`${base}/api/agent/chat`, {
          ...streamInit({ chatId: "budget", messages: [user("a3", "four")] }),
          headers: { ...streamInit({}).headers, ...as("alice") }
        })
        assert.strictEqual(streamed.status, 429)
        const ui = yield* postJson("/api/ui/chat", {
          id: "budget-ui",
          messages: [{ id: "a4", role: "user", parts: [{ type: "text", text: "five" }] }]
        }, as("alice"))
        assert.strictEqual(ui.status, 429, ui.text)
        assert.strictEqual(ui.json.code, "budget_exceeded")

        assert.strictEqual(fake.calls.length, calls, "no provider call for a refused turn")
        const stored = yield* request("/api/chats/budget/messages", { headers: as("alice") })
        assert.deepStrictEqual(stored.json.messages.filter((m: ChatMessage) => m.role === "user").map((m: ChatMessage) => m.content), ["one", "two"])

        // Another user's budget is their own.
        const bob = yield* postJson("/api/agent/chat", { chatId: "budget", messages: [user("b0", "hello")] }, as("bob"))
        assert.strictEqual(bob.status, 200, bob.text)

        const byUser = yield* request("/admin/usage?groupBy=user", { headers: admin })
        assert.strictEqual(byUser.status, 200, byUser.text)
        const rows = byUser.json.rows as Array<{ readonly key: string; readonly [field: string]: unknown }>
        assert.deepStrictEqual(rows.find((r) => r.key === "alice"), { key: "alice", calls: 2, inputTokens: 20, outputTokens: 10, cachedInputTokens: 0 })
        assert.deepStrictEqual(rows.find((r) => r.key === "bob"), { key: "bob", calls: 1, inputTokens: 10, outputTokens: 5, cachedInputTokens: 0 })
        const bobsOnly = yield* request("/admin/usage?groupBy=chat&userId=bob", { headers: admin })
        assert.deepStrictEqual(bobsOnly.json.rows.map((r: { key: string }) => r.key), ["bob/budget"])
        const aliceChat = yield* request("/admin/usage?groupBy=user&userId=alice&chatId=budget", { headers: admin })
        assert.deepStrictEqual(aliceChat.json.rows.map((r: { key: string; calls: number }) => [r.key, r.calls]), [["alice", 2]])
      }))

    it.effect("a job of a user over the budget makes no provider call: it ends saying why", () =>
      Effect.gen(function*() {
        // Two rounds of 15 tokens: the dispatch and the round after the acknowledgement use carol's 30.
        fake.answerWith((params) => Effect.succeed(withUsage(teacher(params))))
        const turn = yield* postJson("/api/agent/chat", { chatId: "job", messages: [user("c0", "research sigma.js v3")] }, as("carol"))
        assert.strictEqual(turn.status, 200, turn.text)
        yield* Deferred.succeed(turnAnswered, undefined)
        const jobs = (id: string) =>
          Effect.map(request(`/api/jobs?chatId=${id}`, { headers: as("carol") }), (r) => r.json.jobs as Array<JobRecord>)
        // The steer is stored before its wake turn calls the provider, which the budget holds back too
        // (the wake is retried; the chat's next turn, once the budget allows, lets the model see it).
        const transcript = Effect.map(request("/api/chats/job/messages", { headers: as("carol") }), (r) => JSON.stringify(r.json.messages))
        yield* eventually(transcript, (t) => t.includes("daily token budget is used up"), "the job's steer saying why")
        const [job] = yield* jobs("job")
        assert.isDefined(job?.finishedAt)
        assert.isUndefined(fake.calls.find((c) => c.model === "research-model"), "the sub-agent's call was not made")
      }))
  })

  const limited = makeFakeProvider()
  layer(layerTestServer(limited.layer, { CHAT_TOKEN: BACKEND, CHAT_RPM: "2" }), { excludeTestServices: true })(
    "CHAT_RPM=2 with users vouched for",
    (it) => {
      it.effect("counts per user: one user's turns never use another's", () =>
        Effect.gen(function*() {
          const turn = (who: string, i: number) =>
            postJson("/api/agent/chat", { messages: [user(`${who}${i}`, "hi")] }, as(who))
          assert.strictEqual((yield* turn("dave", 0)).status, 200)
          assert.strictEqual((yield* turn("dave", 1)).status, 200)
          const third = yield* turn("dave", 2)
          assert.strictEqual(third.status, 429, third.text)
          assert.strictEqual(third.json.code, "rate_limited")
          assert.include(third.json.error, "per user")
          // The same backend token, another user: a bucket of its own.
          assert.strictEqual((yield* turn("erin", 0)).status, 200)
          // The backend token acting for nobody in particular: the token's bucket, not a user's.
          const anonymous = yield* postJson("/api/agent/chat", { messages: [user("x0", "hi")] }, { authorization: `Bearer ${BACKEND}` })
          assert.strictEqual(anonymous.status, 200, anonymous.text)
        }))
    }
  )
})
