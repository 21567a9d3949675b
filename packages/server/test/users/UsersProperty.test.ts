/**
 * Users never cross (docs/users.md): random sequences of operations by random
 * users over random chat ids, against one server that signs users in by JWT (`AUTH_JWT_SECRET`).
 * A model holds, per user, which chats exist, the user messages each holds and the jobs it has;
 * every answer must be the model's for the user who asked, and no answer — nor any provider
 * request — may hold a word of another user's.
 *
 * fast-check, seeded and reproducible (`USERS_SEED=<n>` replays another run; the seed is printed;
 * `USERS_SCALE=<k>` runs k times as many cases). Each run has users of its own (their names carry
 * the run's number), so runs share the server and nothing else.
 */
import { assert, describe, layer } from "@effect/vitest"
import type { ChatMessage } from "@switchboard/domain"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import fc from "fast-check"
import { signWithSecret } from "../support/ProductAuth.ts"
import { baseUrl, layerTestServer, postJsonAt, requestAt } from "../support/TestServer.ts"
import type { RawResponse } from "../support/TestServer.ts"

const SEED = Number(process.env.USERS_SEED ?? 20261237)
const SCALE = Number(process.env.USERS_SCALE ?? 1)
const SECRET = "users-property-secret-of-at-least-32-bytes"
const USERS = ["alice", "bob", "carol"] as const
const CHATS = ["c1", "c2", "c3"] as const
const ANSWER = "noted"

type Route = "turn" | "uiTurn" | "messages" | "uiMessages" | "list" | "delete" | "stop" | "stream" | "uiStream" | "jobs"

interface Op {
  readonly user: number
  readonly chat: (typeof CHATS)[number]
  readonly route: Route
}

const op: fc.Arbitrary<Op> = fc.record({
  user: fc.integer({ min: 0, max: USERS.length - 1 }),
  chat: fc.constantFrom(...CHATS),
  // Turns weigh more, so that chats exist to be read, listed, deleted and crossed.
  route: fc.oneof(
    { weight: 4, arbitrary: fc.constant<Route>("turn") },
    { weight: 2, arbitrary: fc.constant<Route>("uiTurn") },
    { weight: 4, arbitrary: fc.constantFrom<Route>("messages", "uiMessages", "list", "jobs") },
    { weight: 1, arbitrary: fc.constant<Route>("delete") },
    { weight: 1, arbitrary: fc.constantFrom<Route>("stop", "stream", "uiStream") }
  )
})

/** What a user's chat holds: its user messages' texts in order, and its jobs' ids. */
interface ChatModel {
  readonly texts: Array<string>
  readonly jobs: Array<string>
}

/** Everything one run's users hold, and what any answer to a user may never contain. */
class Model {
  readonly chats = new Map<string, Map<string, ChatModel>>()
  readonly users: ReadonlyArray<string>
  constructor(users: ReadonlyArray<string>) {
    this.users = users
    for (const user of users) this.chats.set(user, new Map())
  }
  of(user: string) {
    return this.chats.get(user)!
  }
  /** A user's tag: every text they send carries it, so another user's answer can be searched for it. */
  static tag(user: string) {
    return `[${user}]`
  }
  /** Fails when `text` holds a tag of a user other than `user`. */
  noneOfOthers(user: string, text: string, where: string) {
    for (const other of this.users) {
      if (other !== user && text.includes(Model.tag(other))) {
        throw new Error(`${where}: ${user}'s answer holds ${other}'s words: ${text.slice(0, 300)}`)
      }
    }
  }
}

describe("users never cross (property)", () => {
  const fake = makeFakeProvider()
  layer(layerTestServer(fake.layer, { AUTH_JWT_SECRET: SECRET }), { excludeTestServices: true })("random users × chat ids × routes", (it) => {
    it.effect("every answer is the caller's own, and holds nothing of another user's", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const sql = yield* SqlClient.SqlClient
        fake.answerWith(() => Effect.succeed({ content: ANSWER }))
        const run = <A>(effect: Effect.Effect<A, unknown>) => Effect.runPromise(effect)
        let runs = 0
        let counter = 0
        /** What the runs exercised (printed at the end, so a change that makes them trivial shows). */
        const seen = { ops: 0, ownChat: 0, anotherUsersChatId: 0, deletedOwn: 0 }
        console.log(`users property: seed ${SEED} (USERS_SEED)`)

        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(fc.array(op, { minLength: 8, maxLength: 15 }), async (ops) => {
              const r = ++runs
              const users = USERS.map((name) => `${name}.r${r}`)
              const model = new Model(users)
              const tokens = new Map<string, string>()
              for (const user of users) tokens.set(user, await signWithSecret(SECRET, { sub: user, expiresIn: 600 }))
              const headers = (user: string) => ({ authorization: `Bearer ${tokens.get(user)!}` })
              const get = (user: string, path: string) => run(requestAt(base, path, { headers: headers(user) }))

              /** The answer is the user's own: 200 with the model's transcript, or 404 when the model has no such chat. */
              const checkMessages = async (user: string, chatId: string) => {
                const answer = await get(user, `/api/chats/${chatId}/messages`)
                model.noneOfOthers(user, answer.text, `GET messages ${chatId}`)
                const chat = model.of(user).get(chatId)
                if (chat === undefined) return expectNotFound(answer, chatId, `${user} GET messages ${chatId}`)
                assert.strictEqual(answer.status, 200, answer.text)
                const messages = answer.json.messages as Array<ChatMessage>
                assert.deepStrictEqual(messages.filter((m) => m.role === "user").map((m) => m.content), chat.texts, `${user} ${chatId}`)
                assert.deepStrictEqual(messages.map((m) => m.role), chat.texts.flatMap(() => ["user", "assistant"]))
              }
              const checkUiMessages = async (user: string, chatId: string) => {
                const answer = await get(user, `/api/chats/${chatId}/ui-messages`)
                model.noneOfOthers(user, answer.text, `GET ui-messages ${chatId}`)
                const chat = model.of(user).get(chatId)
                if (chat === undefined) return expectNotFound(answer, chatId, `${user} GET ui-messages ${chatId}`)
                assert.strictEqual(answer.status, 200, answer.text)
                const messages = answer.json.messages as Array<{ role: string; parts: Array<{ type: string; text?: string }> }>
                const userTexts = messages.filter((m) => m.role === "user")
                  .map((m) => m.parts.filter((p) => p.type === "text").map((p) => p.text).join(""))
                assert.deepStrictEqual(userTexts, chat.texts, `${user} ${chatId} ui`)
              }
              const checkList = async (user: string) => {
                const answer = await get(user, "/api/chats?limit=200")
                model.noneOfOthers(user, answer.text, "GET /api/chats")
                assert.strictEqual(answer.status, 200, answer.text)
                const listed = answer.json.chats as Array<{ chatId: string; title: string }>
                const expected = [...model.of(user).entries()].map(([chatId, chat]) => [chatId, chat.texts[0]]).sort()
                assert.deepStrictEqual(listed.map((c) => [c.chatId, c.title]).sort(), expected, `${user}'s list`)
              }
              const checkJobs = async (user: string, chatId: string) => {
                const answer = await get(user, `/api/jobs?chatId=${chatId}`)
                model.noneOfOthers(user, answer.text, `GET jobs ${chatId}`)
                assert.strictEqual(answer.status, 200, answer.text)
                const ids = (answer.json.jobs as Array<{ id: string; chatId: string }>).map((j) => {
                  assert.strictEqual(j.chatId, chatId)
                  return j.id
                })
                assert.deepStrictEqual(ids.sort(), [...(model.of(user).get(chatId)?.jobs ?? [])].sort(), `${user}'s jobs of ${chatId}`)
              }

              for (const { user: u, chat: chatId, route } of ops) {
                const user = users[u]!
                seen.ops++
                if (model.of(user).has(chatId)) seen.ownChat++
                if (users.some((other) => other !== user && model.of(other).has(chatId))) seen.anotherUsersChatId++
                switch (route) {
                  case "turn":
                  case "uiTurn": {
                    const n = ++counter
                    const text = `message ${n} from ${Model.tag(user)} in ${chatId}`
                    const callsBefore = fake.calls.length
                    const answer = route === "turn"
                      ? await run(postJsonAt(base, "/api/agent/chat", {
                        chatId,
                        messages: [{ id: `m${n}`, role: "user", content: text, timestamp: 1_700_000_000_000 + n }]
                      }, headers(user)))
                      : await run(postJsonAt(base, "/api/ui/chat", {
                        id: chatId,
                        messages: [{ id: `m${n}`, role: "user", parts: [{ type: "text", text }] }]
                      }, headers(user)))
                    assert.strictEqual(answer.status, 200, `${route} ${user} ${chatId}: ${answer.text}`)
                    model.noneOfOthers(user, answer.text, `${route} ${chatId}`)
                    if (route === "uiTurn") assert.include(answer.text, "data: [DONE]")
                    const chat = model.of(user).get(chatId) ?? { texts: [], jobs: [] }
                    model.of(user).set(chatId, chat)
                    chat.texts.push(text)
                    // The provider saw this chat of this user's, and nothing else.
                    const sent = fake.calls.slice(callsBefore)
                    assert.strictEqual(sent.length, 1)
                    model.noneOfOthers(user, JSON.stringify(sent), `the provider request of ${user}'s turn on ${chatId}`)
                    assert.deepStrictEqual(sent[0]!.messages.filter((m) => m.role === "user").map((m) => m.content), chat.texts)
                    // A job of this chat (settled), so that the jobs route has something to leak.
                    const job = `job_${r}_${n}`
                    await run(sql`INSERT INTO jobs (id, chat_id, kind, tool_call_id, input, phase, status, error, finished_at)
                      VALUES (${job}, ${`${user}/${chatId}`}, 'research', ${`call_${n}`}, '{}', 'settled', 'error', 'x', now())`)
                    chat.jobs.push(job)
                    break
                  }
                  case "messages":
                    await checkMessages(user, chatId)
                    break
                  case "uiMessages":
                    await checkUiMessages(user, chatId)
                    break
                  case "list":
                    await checkList(user)
                    break
                  case "jobs":
                    await checkJobs(user, chatId)
                    break
                  case "delete": {
                    const answer = await run(requestAt(base, `/api/chats/${chatId}`, { method: "DELETE", headers: headers(user) }))
                    model.noneOfOthers(user, answer.text, `DELETE ${chatId}`)
                    if (model.of(user).delete(chatId)) {
                      assert.strictEqual(answer.status, 204, answer.text)
                      seen.deletedOwn++
                    } else expectNotFound(answer, chatId, `${user} DELETE ${chatId}`)
                    break
                  }
                  case "stop": {
                    // Turns here run to their end before the next operation: none is ever running.
                    const answer = await run(requestAt(base, `/api/chats/${chatId}/stop`, { method: "POST", headers: headers(user) }))
                    assert.strictEqual(answer.status, 200, answer.text)
                    assert.deepStrictEqual(answer.json, { stopped: false })
                    break
                  }
                  case "stream":
                  case "uiStream": {
                    const path = route === "stream" ? `/api/chats/${chatId}/stream` : `/api/ui/chat/${chatId}/stream`
                    assert.strictEqual((await get(user, path)).status, 204, path)
                    break
                  }
                }
              }

              // At the end of a run, every view of every user is the model's.
              for (const user of users) {
                await checkList(user)
                for (const chatId of CHATS) {
                  await checkMessages(user, chatId)
                  await checkUiMessages(user, chatId)
                  await checkJobs(user, chatId)
                }
              }
            }),
            { numRuns: 20 * SCALE, seed: SEED }
          )
        )
        console.log(
          `users property: ${runs} runs, ${seen.ops} operations: ${seen.ownChat} on a chat of the caller's, ` +
            `${seen.anotherUsersChatId} naming a chat id another user has, ${seen.deletedOwn} deletions of a chat`
        )
        assert.isAbove(seen.anotherUsersChatId, seen.ops / 4, "the runs cross users' chat ids often")
      }), { timeout: 120_000 })
  })
})

const expectNotFound = (answer: RawResponse, chatId: string, where: string) => {
  assert.strictEqual(answer.status, 404, `${where}: ${answer.text}`)
  assert.strictEqual(answer.json.code, "chat_not_found", where)
  assert.strictEqual(answer.json.chatId, chatId, where)
}
