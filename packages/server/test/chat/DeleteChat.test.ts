/**
 * `DELETE /admin/chats/{chatId}`, over two replicas on one
 * database: the chat, its transcript, its jobs and its markers go; a job
 * running for it is abandoned (no steer, no row left); a turn or a wake turn
 * in flight when it goes stores nothing and does not bring the chat back —
 * the client's turn still gets its answer (the chat route's contract has no
 * other), with no job dispatched.
 */
import { assert, describe, layer } from "@effect/vitest"
import type { ProviderChatParams } from "@switchboard/domain"
import { subagentResultOf } from "@switchboard/domain"
import { Context, Deferred, Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { ADMIN_TOKEN } from "../support/ControlPlane.ts"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { makeFakeSubagents, researchResult } from "../support/FakeSubagents.ts"
import { eventually, teacher, user } from "../support/JobsHelpers.ts"
import { backend, makeTestDatabase } from "../support/TestDatabase.ts"
import { baseUrl, layerReplica, postJsonAt, requestAt } from "../support/TestServer.ts"

const isSteer = (params: ProviderChatParams) => params.messages.some((m) => subagentResultOf(m) !== undefined)
const lastText = (params: ProviderChatParams) => params.messages.at(-1)?.content ?? ""

const setup = Effect.gen(function*() {
  const db = yield* makeTestDatabase
  const fake = makeFakeProvider()
  const subagents = makeFakeSubagents()
  const memoMap = yield* Layer.makeMemoMap
  const scope = yield* Effect.scope
  const replica = () =>
    Layer.buildWithMemoMap(
      layerReplica(fake.layer, db.client(), { subagents: subagents.layer }, { ADMIN_TOKEN }),
      memoMap,
      scope
    )
  const [a, b] = yield* Effect.all([replica(), replica()], { concurrency: 2 })
  const urls = [yield* baseUrl.pipe(Effect.provide(a)), yield* baseUrl.pipe(Effect.provide(b))] as const
  const inspect = yield* Layer.buildWithMemoMap(db.client(), memoMap, scope)
  const sql = <A extends object>(f: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<A>, unknown>) =>
    SqlClient.SqlClient.use(f).pipe(Effect.provide(inspect), Effect.orDie)
  /** Rows the chat left anywhere. */
  const leftovers = (chatId: string) =>
    sql<{ n: number }>((q) => q`
      SELECT ((SELECT count(*) FROM chats WHERE id = ${chatId}) + (SELECT count(*) FROM chat_messages WHERE chat_id = ${chatId})
        + (SELECT count(*) FROM chat_turns WHERE chat_id = ${chatId}) + (SELECT count(*) FROM jobs WHERE chat_id = ${chatId}))::int AS n`
    ).pipe(Effect.map((rows) => rows[0]!.n))
  const remove = (url: string, chatId: string) =>
    requestAt(url, `/admin/chats/${chatId}`, { method: "DELETE", headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
  const turn = (url: string, chatId: string, id: string, text: string) =>
    postJsonAt(url, "/api/agent/chat", { chatId, messages: [user(id, text)] })
  /** Neither replica serves the transcript any more. */
  const gone = (chatId: string) =>
    Effect.gen(function*() {
      for (const url of urls) {
        const res = yield* requestAt(url, `/api/chats/${chatId}/messages`)
        assert.strictEqual(res.status, 404, `${url}: ${res.text}`)
        assert.strictEqual(res.json.code, "chat_not_found")
        assert.deepStrictEqual((yield* requestAt(url, `/api/jobs?chatId=${chatId}`)).json.jobs, [])
      }
      assert.strictEqual(yield* leftovers(chatId), 0, "no row of the chat is left")
    })
  return { fake, subagents, urls, remove, turn, gone, leftovers }
})

/** The two replicas, their fakes and helpers, started once for the file (each test uses its own chats). */
class Setup extends Context.Service<Setup, Effect.Success<typeof setup>>()("test/chat/DeleteChat/Setup") {}

/** Many round trips each, on a machine the other test files share. */
const slow = 120_000

describe(`DELETE /admin/chats/{chatId}, two replicas on one ${backend} database`, () => {
  layer(Layer.effect(Setup, setup), { excludeTestServices: true, timeout: "2 minutes" })("operator", (it) => {
    it.effect("a job running for the deleted chat is abandoned: no steer, no row, GET messages 404", () =>
      Effect.gen(function*() {
        const { fake, gone, remove, subagents, turn, urls } = yield* Setup
        fake.answerWith((params) => Effect.succeed(teacher(params)))
        const runEnded = yield* Deferred.make<void>()
        subagents.answerWith((job, gated) =>
          job.input && (job.input as { question?: string }).question === "doomed"
            ? gated.pipe(Effect.ensuring(Deferred.succeed(runEnded, undefined)))
            : Effect.succeed(researchResult(`brief for ${job.jobId}`))
        )
        const dispatched = yield* turn(urls[0], "doomed-chat", "u1", "research doomed")
        assert.strictEqual(dispatched.status, 200, dispatched.text)
        const jobId = dispatched.json.jobs[0].id as string
        yield* subagents.waitForRuns(1)
        const before = (yield* requestAt(urls[1], "/api/chats/doomed-chat/messages")).json.messages as Array<{ id: string }>
        assert.strictEqual(before[0]?.id, "u1", "the chat exists, its job running")

        const deleted = yield* remove(urls[1], "doomed-chat")
        assert.strictEqual(deleted.status, 204, deleted.text)
        assert.strictEqual(deleted.text, "")
        yield* gone("doomed-chat")

        // The sub-agent finishes (or its runner saw the lease go first): whichever, nothing is written.
        yield* subagents.finish(jobId, researchResult("a result nobody will see"))
        yield* Deferred.await(runEnded)
        // The pipeline is alive meanwhile: another chat's job is run and steered.
        const control = yield* turn(urls[1], "control-chat", "c1", "research control")
        assert.strictEqual(control.status, 200, control.text)
        yield* eventually(
          requestAt(urls[0], "/api/jobs?chatId=control-chat"),
          (res) => res.json.jobs.length === 1 && res.json.jobs[0].status === "done",
          "the control chat's job settled"
        )
        yield* gone("doomed-chat")
        assert.isFalse(
          fake.calls.some((params) => params.messages.some((m) => subagentResultOf(m)?.jobId === jobId)),
          "the deleted chat's steer was never delivered"
        )
      }), slow)

    it.effect("a turn in flight when its chat is deleted stores nothing, dispatches nothing, still answers its client", () =>
      Effect.gen(function*() {
        const { fake, gone, leftovers, remove, turn, urls } = yield* Setup
        let release = yield* Deferred.make<void>()
        fake.answerWith((params) => {
          const text = lastText(params)
          if (text === "slow hello") return Deferred.await(release).pipe(Effect.as({ content: "an answer too late" }))
          if (text === "slow research") {
            return Deferred.await(release).pipe(Effect.as({
              content: "",
              toolCalls: [{ id: "call_late", name: "research", args: { question: "late" } }]
            }))
          }
          return Effect.succeed(teacher(params))
        })
        for (const [chatId, text] of [["mid-turn", "slow hello"], ["mid-dispatch", "slow research"]] as const) {
          release = yield* Deferred.make<void>()
          const first = yield* turn(urls[0], chatId, "u0", "hi")
          assert.strictEqual(first.status, 200, first.text)
          const calls = fake.calls.length
          const inFlight = yield* Effect.forkChild(turn(urls[0], chatId, "u1", text))
          yield* eventually(Effect.sync(() => fake.calls.length), (n) => n > calls, "the provider was called")
          const deleted = yield* remove(urls[1], chatId)
          assert.strictEqual(deleted.status, 204, deleted.text)
          assert.strictEqual(yield* leftovers(chatId), 0)
          yield* Deferred.succeed(release, undefined)
          const answer = yield* Fiber.join(inFlight)
          assert.strictEqual(answer.status, 200, answer.text)
          assert.strictEqual(answer.json.content, text === "slow hello" ? "an answer too late" : "")
          assert.isUndefined(answer.json.jobs, "no job was dispatched for a deleted chat")
          yield* gone(chatId)
        }
        // The id may be used again: a new, empty chat.
        const fresh = yield* turn(urls[1], "mid-turn", "n1", "hello again")
        assert.strictEqual(fresh.status, 200, fresh.text)
        const transcript = (yield* requestAt(urls[0], "/api/chats/mid-turn/messages")).json.messages as Array<{ id: string }>
        assert.deepStrictEqual(transcript.map((m) => m.id), ["n1", fresh.json.messageId])
      }), slow)

    it.effect("a turn that outlives its deleted chat writes nothing into a new chat of the same id", () =>
      Effect.gen(function*() {
        const { fake, remove, turn, urls } = yield* Setup
        let release = yield* Deferred.make<void>()
        fake.answerWith((params) => {
          const text = lastText(params)
          if (text === "old life hello") return Deferred.await(release).pipe(Effect.as({ content: "the old life's answer" }))
          if (text === "old life research") {
            return Deferred.await(release).pipe(Effect.as({
              content: "",
              toolCalls: [{ id: "call_old", name: "research", args: { question: "old life" } }]
            }))
          }
          return Effect.succeed(teacher(params))
        })
        // The answer (one statement with the turn's end), then a job and its ack (the fallback
        // transaction: the new life's turn took and released the marker meanwhile).
        for (const [chatId, text] of [["reborn-answer", "old life hello"], ["reborn-dispatch", "old life research"]] as const) {
          release = yield* Deferred.make<void>()
          const calls = fake.calls.length
          const oldLife = yield* Effect.forkChild(turn(urls[0], chatId, "u1", text))
          yield* eventually(Effect.sync(() => fake.calls.length), (n) => n > calls, "the old life's turn called the provider")
          assert.strictEqual((yield* remove(urls[1], chatId)).status, 204)
          const fresh = yield* turn(urls[1], chatId, "n1", "new life")
          assert.strictEqual(fresh.status, 200, fresh.text)
          yield* Deferred.succeed(release, undefined)
          const late = yield* Fiber.join(oldLife)
          assert.strictEqual(late.status, 200, late.text)
          assert.isUndefined(late.json.jobs, "no job was dispatched for the deleted chat")
          const transcript = (yield* requestAt(urls[0], `/api/chats/${chatId}/messages`)).json.messages as Array<{ id: string }>
          assert.deepStrictEqual(transcript.map((m) => m.id), ["n1", fresh.json.messageId], "the new chat holds its own turn only")
          assert.deepStrictEqual((yield* requestAt(urls[0], `/api/jobs?chatId=${chatId}`)).json.jobs, [])
        }
      }), slow)

    it.effect("a wake turn in flight when its chat is deleted stores nothing: the steer's answer does not bring it back", () =>
      Effect.gen(function*() {
        const { fake, gone, remove, subagents, turn, urls } = yield* Setup
        const release = yield* Deferred.make<void>()
        let wakeCalls = 0
        fake.answerWith((params) =>
          isSteer(params)
            ? Effect.sync(() => wakeCalls++).pipe(Effect.andThen(Deferred.await(release)), Effect.as(teacher(params)))
            : Effect.succeed(teacher(params))
        )
        subagents.instant()
        const dispatched = yield* turn(urls[0], "waking", "u1", "research waking")
        assert.strictEqual(dispatched.status, 200, dispatched.text)
        yield* eventually(Effect.sync(() => wakeCalls), (n) => n > 0, "the wake turn called the provider")
        const deleted = yield* remove(urls[1], "waking")
        assert.strictEqual(deleted.status, 204, deleted.text)
        yield* Deferred.succeed(release, undefined)
        // Let the wake end (its provider call answered) on whichever replica ran it, then look.
        yield* Effect.sleep("1 second")
        yield* gone("waking")
      }), slow)

    it.effect("unknown chat: 404 chat_not_found; a malformed id: 400; no admin token: 401", () =>
      Effect.gen(function*() {
        const { remove, urls } = yield* Setup
        const missing = yield* remove(urls[0], "never-was")
        assert.strictEqual(missing.status, 404)
        assert.deepInclude(missing.json, { code: "chat_not_found", chatId: "never-was" })
        const malformed = yield* remove(urls[0], "a%20b")
        assert.strictEqual(malformed.status, 400)
        assert.strictEqual(malformed.json.code, "invalid_request")
        const anonymous = yield* requestAt(urls[0], "/admin/chats/never-was", { method: "DELETE" })
        assert.strictEqual(anonymous.status, 401)
      }), slow)
  })
})
