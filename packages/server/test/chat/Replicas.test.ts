/**
 * Two server replicas, each with its own connection pool, on one database:
 * the in-flight marker and the transcript live in the database, so a chat's
 * turn on one replica makes the other answer 409, and either serves the
 * transcript both wrote.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ChatMessage } from "@switchboard/domain"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { baseUrl } from "../support/TestServer.ts"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { backend, makeTestDatabase } from "../support/TestDatabase.ts"
import { layerReplica, postJsonAt, requestAt } from "../support/TestServer.ts"

const user = (id: string, content: string): ChatMessage => ({ id, role: "user", content, timestamp: 1 })

describe(`two replicas on one ${backend} database`, () => {
  it.live("a turn in flight on one replica is a 409 on the other; the transcript is shared", () =>
    Effect.gen(function*() {
      const db = yield* makeTestDatabase
      const fake = makeFakeProvider()
      // Built concurrently: both run the migrations at start, and the migrator's lock makes them take turns.
      // One MemoMap, so that on PGlite (one session) both share its connection; on PostgreSQL each has its pool.
      const memoMap = yield* Layer.makeMemoMap
      const scope = yield* Effect.scope
      const replica = () => Layer.buildWithMemoMap(layerReplica(fake.layer, db.client()), memoMap, scope)
      const [a, b] = yield* Effect.all([replica(), replica()], { concurrency: 2 })
      const urlA = yield* baseUrl.pipe(Effect.provide(a))
      const urlB = yield* baseUrl.pipe(Effect.provide(b))
      assert.notStrictEqual(urlA, urlB)

      const entered = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      fake.answerWith(() =>
        Deferred.succeed(entered, undefined).pipe(Effect.andThen(Deferred.await(release)), Effect.as({ content: "from A" }))
      )
      const onA = yield* Effect.forkChild(postJsonAt(urlA, "/api/agent/chat", { chatId: "shared", messages: [user("u1", "one")] }))
      yield* Deferred.await(entered)

      const onB = yield* postJsonAt(urlB, "/api/agent/chat", { chatId: "shared", messages: [user("u1", "one"), user("u2", "two")] })
      assert.strictEqual(onB.status, 409)
      assert.strictEqual(onB.json.code, "turn_in_flight")

      yield* Deferred.succeed(release, undefined)
      const first = yield* Fiber.join(onA)
      assert.strictEqual(first.status, 200)

      fake.answerWith(() => Effect.succeed({ content: "from B" }))
      const history = [user("u1", "one"), { id: first.json.messageId, role: "assistant", content: "from A", timestamp: 2 }, user("u3", "three")]
      const second = yield* postJsonAt(urlB, "/api/agent/chat", { chatId: "shared", messages: history })
      assert.strictEqual(second.status, 200, "the marker was released for every replica")

      for (const url of [urlA, urlB]) {
        const transcript = yield* requestAt(url, "/api/chats/shared/messages")
        assert.deepStrictEqual(
          transcript.json.messages.map((m: ChatMessage) => m.content),
          ["one", "from A", "three", "from B"]
        )
      }
    }).pipe(Effect.scoped))
})
