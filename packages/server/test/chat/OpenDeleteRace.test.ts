/**
 * A turn that opens a chat as the chat is deleted (docs/users.md): the turn either came first — and
 * the delete takes it with the chat — or it opens the chat anew, empty. Never the deleted chat's
 * messages in the new chat's conversation: the opening's snapshot, taken while the delete was
 * uncommitted, still shows them. The race is made to happen (`raceUnderLock`): the delete is held
 * uncommitted while the other replica's opening waits on the chat's row. PostgreSQL only.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ChatMessage } from "@switchboard/domain"
import { Context, Effect } from "effect"
import { ChatRepo } from "../../src/chat/ChatRepo.ts"
import { chatKey } from "../../src/users/ChatKey.ts"
import { raceUnderLock, twoReplicas } from "../support/LockRace.ts"
import { backend } from "../support/TestDatabase.ts"

const CHAT = chatKey("default", "doomed")
const message = (id: string, role: "user" | "assistant", content: string): ChatMessage => ({ id, role, content, timestamp: 1 })

describe(`a turn opening a chat as it is deleted (${backend})`, () => {
  it.live.skipIf(backend !== "postgres")("the opening that waited on the delete finds the chat anew, without the deleted messages", () =>
    Effect.gen(function*() {
      const { first, second, sql } = yield* twoReplicas(ChatRepo.layer)
      const [a, b] = [Context.get(first, ChatRepo), Context.get(second, ChatRepo)]
      const before = yield* a.openTurn(CHAT, "t1", "1 minute", { _tag: "Agent", agent: "default", messages: [message("u1", "user", "my secret")] })
      assert.strictEqual(before._tag, "Taken")
      yield* a.endTurn(CHAT, "t1", [message("a1", "assistant", "noted")], before._tag === "Taken" ? before.generation : undefined)

      const outcome = yield* raceUnderLock({
        sql,
        first: a.remove(CHAT),
        then: Effect.void,
        second: b.openTurn(CHAT, "t2", "1 minute", { _tag: "Agent", agent: "default", messages: [message("u2", "user", "hello again")] }),
        waitsIn: "INSERT INTO chats"
      })
      const opened = outcome.second
      assert.strictEqual(opened._tag, "Taken")
      assert.deepStrictEqual(opened._tag === "Taken" ? opened.transcript : undefined, [])
      const stored = yield* b.transcript(CHAT)
      assert.deepStrictEqual(stored.map((m) => m.content), ["hello again"])
    }).pipe(Effect.scoped), { timeout: 30_000 })
})
