/**
 * A streamed turn seen from the other replica of two on one PostgreSQL
 * (docs/streaming.md): resume from the first chunk there after the client
 * went away from the first, and a stop asked there that ends the turn where
 * it runs. PostgreSQL only: the embedded database is one process (its
 * DATA_DIR lock), so there is no other replica to follow from.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ChatMessage, UiChunk } from "@switchboard/domain"
import { Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { paced } from "../support/PacedProvider.ts"
import { readEventStream, streamedText, streamInit } from "../support/EventStream.ts"
import { eventually } from "../support/JobsHelpers.ts"
import { backend, makeTestDatabase } from "../support/TestDatabase.ts"
import { baseUrl, layerReplica, postJsonAt, requestAt } from "../support/TestServer.ts"

const user = (id: string, content: string): ChatMessage => ({ id, role: "user", content, timestamp: 1 })

const twoReplicas = (provider: ReturnType<typeof paced>) =>
  Effect.gen(function*() {
    const db = yield* makeTestDatabase
    const memoMap = yield* Layer.makeMemoMap
    const scope = yield* Effect.scope
    const replica = () => Layer.buildWithMemoMap(layerReplica(provider.layer, db.client()), memoMap, scope)
    const [a, b] = yield* Effect.all([replica(), replica()], { concurrency: 2 })
    return { a: yield* baseUrl.pipe(Effect.provide(a)), b: yield* baseUrl.pipe(Effect.provide(b)), db }
  })

const transcriptAt = (base: string, chatId: string) =>
  requestAt(base, `/api/chats/${chatId}/messages`).pipe(Effect.map((r) => r.json.messages as Array<ChatMessage>))

describe.skipIf(backend === "embedded")(`streamed turns across two replicas on ${backend}`, () => {
  it.live("a client gone after the first delta: the answer is stored once; the other replica replays it from the first chunk", () =>
    Effect.gen(function*() {
      const provider = paced()
      provider.state.pieces = ["alpha ", "beta ", "gamma ", "delta ", "epsilon"]
      provider.state.gapMs = 120
      const { a, b } = yield* twoReplicas(provider)
      const cut = yield* readEventStream(`${a}/api/agent/chat`, streamInit({ chatId: "r-away", messages: [user("u1", "go")] }), (c) => c.type === "text-delta")
      assert.strictEqual(streamedText(cut.chunks), "alpha ")
      const resumed = yield* readEventStream(`${b}/api/chats/r-away/stream`, { method: "GET" })
      assert.strictEqual(resumed.status, 200)
      assert.strictEqual(resumed.headers.get("x-vercel-ai-ui-message-stream"), "v1")
      assert.deepStrictEqual(resumed.chunks[0], cut.chunks[0], "the same turn, from its first chunk")
      assert.strictEqual(streamedText(resumed.chunks), "alpha beta gamma delta epsilon")
      assert.strictEqual(resumed.chunks[resumed.chunks.length - 1]!.type, "finish")
      assert.isTrue(resumed.done)
      const answers = (yield* transcriptAt(b, "r-away")).filter((m) => m.role === "assistant")
      assert.deepStrictEqual(answers.map((m) => m.content), ["alpha beta gamma delta epsilon"])
      const idle = yield* readEventStream(`${b}/api/chats/r-away/stream`, { method: "GET" })
      assert.strictEqual(idle.status, 204)
    }).pipe(Effect.scoped))

  it.live("a turn nobody follows from the other replica writes no chunk to the database; one followed does", () =>
    Effect.gen(function*() {
      const provider = paced()
      provider.state.pieces = ["one ", "two ", "three"]
      provider.state.gapMs = 60
      const { a, b, db } = yield* twoReplicas(provider)
      const rows = (chatId: string) =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const [row] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM turn_chunks WHERE chat_id = ${chatId}`
          return row!.n
        }).pipe(Effect.provide(db.client()))
      const alone = yield* readEventStream(`${a}/api/agent/chat`, streamInit({ chatId: "r-alone", messages: [user("u1", "go")] }))
      assert.strictEqual(streamedText(alone.chunks), "one two three")
      yield* Effect.sleep("200 millis")
      assert.strictEqual(yield* rows("r-alone"), 0, "streamed and stored, never written to turn_chunks")

      provider.state.gapMs = 150
      const reading = yield* readEventStream(`${a}/api/agent/chat`, streamInit({ chatId: "r-seen", messages: [user("u1", "go")] })).pipe(
        Effect.forkChild
      )
      const followed = yield* eventually(
        readEventStream(`${b}/api/chats/r-seen/stream`, { method: "GET" }),
        (r) => r.status === 200,
        "the turn followed from B"
      )
      assert.strictEqual(streamedText(followed.chunks), "one two three")
      yield* Fiber.join(reading)
      assert.isAbove(yield* rows("r-seen"), 0, "written once B asked for it")
    }).pipe(Effect.scoped))

  it.live("a stop asked of the other replica ends the turn where it runs: partial answer stored, chat free at once", () =>
    Effect.gen(function*() {
      const provider = paced()
      provider.state.pieces = Array.from({ length: 50 }, (_, i) => `w${i} `)
      provider.state.gapMs = 80
      const { a, b } = yield* twoReplicas(provider)
      const reading = yield* readEventStream(`${a}/api/agent/chat`, streamInit({ chatId: "r-stop", messages: [user("u1", "go")] })).pipe(Effect.forkChild)
      // Followed from B until a few deltas went by, so the stop lands mid-stream.
      const seen = yield* eventually(
        readEventStream(`${b}/api/chats/r-stop/stream`, { method: "GET" }, (_, all) => all.filter((c) => c.type === "text-delta").length >= 3),
        (r) => r.status === 200,
        "the turn streaming on A, followed from B"
      )
      assert.isAtLeast(streamedText(seen.chunks).length, 1)
      const stop = yield* postJsonAt(b, "/api/chats/r-stop/stop", {})
      assert.deepStrictEqual(stop.json, { stopped: true })
      provider.state.gapMs = 0
      provider.state.pieces = ["next"]
      const next = yield* postJsonAt(b, "/api/agent/chat", { chatId: "r-stop", messages: [user("u2", "next")] })
      assert.strictEqual(next.status, 200, "the chat is free once stop answered")
      const read = yield* Fiber.join(reading)
      const finish = read.chunks[read.chunks.length - 1] as Extract<UiChunk, { type: "finish" }>
      assert.strictEqual(finish.messageMetadata?.stopped, true)
      const answers = (yield* transcriptAt(a, "r-stop")).filter((m) => m.role === "assistant")
      assert.strictEqual(answers.length, 2)
      assert.deepStrictEqual(answers[0]!.metadata, { stopped: true })
      assert.strictEqual(answers[0]!.content, streamedText(read.chunks))
      assert.strictEqual(provider.state.interrupted, 1, "the provider call was cut short")
    }).pipe(Effect.scoped))

  it.live("a stop asked while the running replica's listener reconnects still stops the turn", () =>
    Effect.gen(function*() {
      const provider = paced()
      provider.state.pieces = Array.from({ length: 50 }, (_, i) => `w${i} `)
      provider.state.gapMs = 80
      const { a, b, db } = yield* twoReplicas(provider)
      const reading = yield* readEventStream(`${a}/api/agent/chat`, streamInit({ chatId: "r-lost", messages: [user("u1", "go")] }), (c) => c.type === "finish").pipe(
        Effect.forkChild
      )
      yield* eventually(transcriptAt(b, "r-lost"), (messages) => messages?.length === 1, "the turn accepted on A")
      // Every replica's listener cut: a notification sent before they listen again is heard by none.
      yield* SqlClient.SqlClient.use((sql) =>
        sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'`
      ).pipe(Effect.provide(db.client()))
      const stop = yield* postJsonAt(b, "/api/chats/r-lost/stop", {})
      assert.deepStrictEqual(stop.json, { stopped: true })
      const read = yield* Fiber.join(reading)
      const finish = read.chunks[read.chunks.length - 1] as Extract<UiChunk, { type: "finish" }>
      assert.strictEqual(finish.messageMetadata?.stopped, true)
      const [answer] = (yield* transcriptAt(a, "r-lost")).filter((m) => m.role === "assistant")
      assert.deepStrictEqual(answer!.metadata, { stopped: true })
      assert.isBelow(streamedText(read.chunks).split(" ").length, 50, "stopped before the end")
    }).pipe(Effect.scoped))
})
