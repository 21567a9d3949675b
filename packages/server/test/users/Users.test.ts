/**
 * End users over HTTP (docs/users.md): who a request acts for, and that every chat route answers for
 * the caller's own chats only — another user's chat is indistinguishable from none.
 */
import { assert, describe, layer } from "@effect/vitest"
import type { ChatMessage } from "@switchboard/domain"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { audience, issuer, makeKey, signConfused, signToken, signWithSecret, startJwks, unsignedToken } from "../support/ProductAuth.ts"
import { layerTestServer, postJson, request } from "../support/TestServer.ts"

const user = (id: string, content: string): ChatMessage => ({ id, role: "user", content, timestamp: 1_700_000_000_000 })

// The product's keys and JWKS, up before the server that is pointed at them.
const key = await makeKey("k1")
const foreign = await makeKey("k1")
const jwks = await startJwks([key])
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

describe("users", () => {
  const jwksFake = makeFakeProvider()
  layer(
    layerTestServer(jwksFake.layer, { AUTH_JWKS_URL: jwks.url, AUTH_ISSUER: issuer, AUTH_AUDIENCE: audience }),
    { excludeTestServices: true }
  )("AUTH_JWKS_URL", (it) => {
    it.effect("every refused token is the same 401; a good one is its user's", () =>
      Effect.gen(function*() {
        const body = { chatId: "c1", messages: [user("u1", "hi")] }
        const good = yield* postJson("/api/agent/chat", body, bearer(yield* Effect.promise(() => signToken(key, { sub: "alice" }))))
        assert.strictEqual(good.status, 200, good.text)

        const tokens: Record<string, string | undefined> = {
          none: undefined,
          garbage: "garbage",
          "alg none": unsignedToken(),
          "HS256 with the RSA public key": yield* Effect.promise(() => signConfused(key)),
          "a foreign key": yield* Effect.promise(() => signToken(foreign)),
          "an unknown kid": yield* Effect.promise(() => signToken(key, {}, "k-unknown")),
          expired: yield* Effect.promise(() => signToken(key, { expiresIn: -3600 })),
          "nbf ahead": yield* Effect.promise(() => signToken(key, { notBefore: 3600 })),
          "wrong iss": yield* Effect.promise(() => signToken(key, { iss: "https://elsewhere.test" })),
          "wrong aud": yield* Effect.promise(() => signToken(key, { aud: "elsewhere" }))
        }
        const bodies = new Set<string>()
        for (const [name, token] of Object.entries(tokens)) {
          const answer = yield* postJson("/api/agent/chat", body, token === undefined ? {} : bearer(token))
          assert.strictEqual(answer.status, 401, name)
          assert.strictEqual(answer.json.code, "unauthenticated", name)
          assert.include(answer.headers.get("www-authenticate") ?? "", "Bearer", name)
          bodies.add(answer.text)
        }
        assert.strictEqual(bodies.size, 1, "one body for every refusal: it tells nothing about why")
        // A refused token ran nothing.
        assert.strictEqual(jwksFake.calls.length, 1)
      }))

    it.effect("the JWT's sub is the user whatever X-Switchboard-User says", () =>
      Effect.gen(function*() {
        const token = yield* Effect.promise(() => signToken(key, { sub: "mallory" }))
        const turn = yield* postJson("/api/agent/chat", { chatId: "mine", messages: [user("m1", "mallory's")] }, {
          ...bearer(token),
          "x-switchboard-user": "alice"
        })
        assert.strictEqual(turn.status, 200)
        const alice = bearer(yield* Effect.promise(() => signToken(key, { sub: "alice" })))
        assert.strictEqual((yield* request("/api/chats/mine/messages", { headers: alice })).status, 404)
        assert.strictEqual((yield* request("/api/chats/mine/messages", { headers: bearer(token) })).status, 200)
      }))
  })

  const fake = makeFakeProvider()
  const secret = "the-product's-secret-of-32-bytes-or-more"
  layer(layerTestServer(fake.layer, { AUTH_JWT_SECRET: secret, CHAT_TOKEN: "backend-token" }), { excludeTestServices: true })(
    "two users",
    (it) => {
      const as = (sub: string) => Effect.map(Effect.promise(() => signWithSecret(secret, { sub })), bearer)

      it.effect("B never sees, follows, stops, lists or deletes A's chat; B's turn on A's chat id is B's own chat", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const a = yield* as("alice")
          const b = yield* as("bob")
          fake.answerWith(() => Effect.succeed({ content: "noted" }))
          const first = yield* postJson("/api/agent/chat", { chatId: "shared", messages: [user("a1", "alice's secret plan")] }, a)
          assert.strictEqual(first.status, 200, first.text)
          // A job of A's chat, settled, so that the list has something to leak.
          yield* sql`INSERT INTO jobs (id, chat_id, kind, tool_call_id, input, phase, status, error, finished_at)
            VALUES ('job_alice', 'alice/shared', 'research', 'call_a', '{}', 'settled', 'error', 'x', now())`

          for (const headers of [b, {}]) {
            const missing = yield* request("/api/chats/shared/messages", { headers })
            if (Object.keys(headers).length === 0) {
              assert.strictEqual(missing.status, 401)
              continue
            }
            assert.strictEqual(missing.status, 404)
            assert.strictEqual(missing.json.code, "chat_not_found")
            assert.strictEqual(missing.json.chatId, "shared")
            assert.strictEqual((yield* request("/api/chats/shared/ui-messages", { headers })).status, 404)
            assert.strictEqual((yield* request("/api/chats/shared/stream", { headers })).status, 204)
            assert.strictEqual((yield* request("/api/ui/chat/shared/stream", { headers })).status, 204)
            const stop = yield* request("/api/chats/shared/stop", { method: "POST", headers })
            assert.deepStrictEqual(stop.json, { stopped: false })
            assert.deepStrictEqual((yield* request("/api/jobs?chatId=shared", { headers })).json, { jobs: [] })
            assert.deepStrictEqual((yield* request("/api/chats", { headers })).json, { chats: [] })
            const removed = yield* request("/api/chats/shared", { method: "DELETE", headers })
            assert.strictEqual(removed.status, 404)
            assert.strictEqual(removed.json.code, "chat_not_found")
          }

          // B's turn on the same chat id: a new chat of B's; the provider sees nothing of A's.
          const before = fake.calls.length
          const bTurn = yield* postJson("/api/agent/chat", { chatId: "shared", messages: [user("b1", "bob here")] }, b)
          assert.strictEqual(bTurn.status, 200, bTurn.text)
          const sent = JSON.stringify(fake.calls.slice(before))
          assert.include(sent, "bob here")
          assert.notInclude(sent, "alice's secret plan")

          const aTranscript = (yield* request("/api/chats/shared/messages", { headers: a })).json.messages as Array<ChatMessage>
          assert.deepStrictEqual(aTranscript.map((m) => m.content), ["alice's secret plan", "noted"])
          const bTranscript = (yield* request("/api/chats/shared/messages", { headers: b })).json.messages as Array<ChatMessage>
          assert.deepStrictEqual(bTranscript.map((m) => m.content), ["bob here", "noted"])
          const aJobs = (yield* request("/api/jobs?chatId=shared", { headers: a })).json.jobs
          assert.deepStrictEqual(aJobs.map((j: { id: string; chatId: string }) => [j.id, j.chatId]), [["job_alice", "shared"]])
          assert.deepStrictEqual((yield* request("/api/jobs?chatId=shared", { headers: b })).json, { jobs: [] })

          // B deletes B's chat: A's is untouched.
          assert.strictEqual((yield* request("/api/chats/shared", { method: "DELETE", headers: b })).status, 204)
          assert.strictEqual((yield* request("/api/chats/shared/messages", { headers: b })).status, 404)
          assert.strictEqual((yield* request("/api/chats/shared/messages", { headers: a })).status, 200)
        }))

      it.effect("GET /api/chats: the caller's chats, most recently updated first, paged", () =>
        Effect.gen(function*() {
          const carol = yield* as("carol")
          for (const [chatId, text] of [["one", "first chat"], ["two", "second chat"], ["three", `  a   long\n title ${"x".repeat(100)}`]]) {
            assert.strictEqual((yield* postJson("/api/agent/chat", { chatId, messages: [user(`${chatId}-1`, text!)] }, carol)).status, 200)
          }
          // A later message in "one" makes it the most recent.
          assert.strictEqual((yield* postJson("/api/agent/chat", { chatId: "one", messages: [user("one-2", "again")] }, carol)).status, 200)
          const page1 = (yield* request("/api/chats?limit=2", { headers: carol })).json
          assert.deepStrictEqual(page1.chats.map((c: { chatId: string }) => c.chatId), ["one", "three"])
          assert.strictEqual(page1.chats[0].title, "first chat")
          assert.strictEqual(page1.chats[0].agent, "media-editor")
          const title: string = page1.chats[1].title
          assert.isTrue(title.startsWith("a long title xxx"), title)
          assert.strictEqual(Array.from(title).length, 80)
          assert.isTrue(title.endsWith("…"))
          assert.isString(page1.nextBefore)
          const page2 = (yield* request(`/api/chats?limit=2&before=${encodeURIComponent(page1.nextBefore)}`, { headers: carol })).json
          assert.deepStrictEqual(page2.chats.map((c: { chatId: string }) => c.chatId), ["two"])
          assert.isUndefined(page2.nextBefore)
          assert.isAtLeast(Date.parse(page1.chats[0].updatedAt), Date.parse(page1.chats[1].updatedAt))
          assert.strictEqual((yield* request("/api/chats?limit=0", { headers: carol })).status, 400)
        }))

      it.effect("CHAT_TOKEN is a backend's: it acts for X-Switchboard-User, which it must name", () =>
        Effect.gen(function*() {
          const backend = { authorization: "Bearer backend-token" }
          const missing = yield* postJson("/api/agent/chat", { messages: [user("x", "hi")] }, backend)
          assert.strictEqual(missing.status, 400)
          assert.strictEqual(missing.json.code, "invalid_request")
          assert.include(missing.json.error, "X-Switchboard-User".toLowerCase())
          const asDave = { ...backend, "x-switchboard-user": "dave" }
          assert.strictEqual((yield* postJson("/api/agent/chat", { chatId: "d1", messages: [user("d1-1", "dave's")] }, asDave)).status, 200)
          const dave = yield* as("dave")
          const listed = (yield* request("/api/chats", { headers: dave })).json.chats
          assert.deepStrictEqual(listed.map((c: { chatId: string }) => c.chatId), ["d1"])
          assert.strictEqual((yield* request("/api/chats/d1/messages", { headers: { ...backend, "x-switchboard-user": "erin" } })).status, 404)
        }))
    }
  )

  const plain = makeFakeProvider()
  layer(layerTestServer(plain.layer, {}), { excludeTestServices: true })("without AUTH_*", (it) => {
    it.effect("the user is X-Switchboard-User, else default: one user, as before users", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* postJson("/api/agent/chat", { chatId: "legacy", messages: [user("l1", "hello")] })).status, 200)
        assert.strictEqual((yield* request("/api/chats/legacy/messages")).status, 200)
        assert.strictEqual((yield* request("/api/chats/legacy/messages", { headers: { "x-switchboard-user": "default" } })).status, 200)
        assert.strictEqual((yield* request("/api/chats/legacy/messages", { headers: { "x-switchboard-user": "zoe" } })).status, 404)
        const list = (yield* request("/api/chats")).json.chats
        assert.deepStrictEqual(list.map((c: { chatId: string }) => c.chatId), ["legacy"])
        const tooLong = yield* request("/api/chats", { headers: { "x-switchboard-user": "z".repeat(257) } })
        assert.strictEqual(tooLong.status, 400)
      }))
  })
})
