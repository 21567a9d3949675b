/** When the database goes away under a running server: 503s that say so, never a 500 or a hang. */
import { assert, describe, it } from "@effect/vitest"
import type { ChatMessage } from "@switchboard/domain"
import { Effect, Layer, Scope } from "effect"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { backend, makeTestDatabase } from "../support/TestDatabase.ts"
import { baseUrl, layerReplica, postJsonAt, requestAt } from "../support/TestServer.ts"

const user = (id: string, content: string): ChatMessage => ({ id, role: "user", content, timestamp: 1 })

describe(`database down (${backend})`, () => {
  it.live("persisted turns and transcripts answer 503 database_unavailable; readiness fails; liveness holds", () =>
    Effect.gen(function*() {
      const dbScope = yield* Scope.make()
      const db = yield* makeTestDatabase.pipe(Scope.provide(dbScope))
      const server = yield* Layer.build(layerReplica(makeFakeProvider().layer, db.client()))
      const url = yield* baseUrl.pipe(Effect.provide(server))

      const ok = yield* postJsonAt(url, "/api/agent/chat", { chatId: "c1", messages: [user("u1", "hi")] })
      assert.strictEqual(ok.status, 200)

      yield* Scope.close(dbScope, undefined as never) // the database (and its connections) are gone

      const turn = yield* postJsonAt(url, "/api/agent/chat", { chatId: "c1", messages: [user("u1", "hi"), user("u2", "again")] })
      assert.strictEqual(turn.status, 503, turn.text)
      assert.strictEqual(turn.json.code, "database_unavailable")
      assert.strictEqual(turn.headers.get("retry-after"), "1")

      const transcript = yield* requestAt(url, "/api/chats/c1/messages")
      assert.strictEqual(transcript.status, 503)

      assert.strictEqual((yield* requestAt(url, "/readyz")).status, 503)
      assert.strictEqual((yield* requestAt(url, "/healthz")).status, 200)
      const stateless = yield* postJsonAt(url, "/api/agent/chat", { messages: [user("u1", "no chatId: no database")] })
      assert.strictEqual(stateless.status, 200)
    }).pipe(Effect.scoped))
})
