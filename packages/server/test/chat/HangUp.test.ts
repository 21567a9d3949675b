/**
 * A client that hangs up 0–3 ms after sending a turn with `chatId` must not
 * block the chat: the in-flight marker is released on every exit, and a turn
 * that was accepted has its user message stored (write-ahead). Real sockets,
 * destroyed right after the write.
 */
import { assert, describe, layer } from "@effect/vitest"
import type { ChatMessage } from "@switchboard/domain"
import { Effect } from "effect"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { hangUpAfterWrite, rawPost } from "../support/RawSocket.ts"
import { backend } from "../support/TestDatabase.ts"
import { baseUrl, layerTestServer, postJson, request } from "../support/TestServer.ts"

const user = (id: string, content: string): ChatMessage => ({ id, role: "user", content, timestamp: 1 })

const fake = makeFakeProvider()
const TRIES = 40

/**
 * The turn right after a hang-up may still meet the aborted one winding down
 * (a genuine 409 for a moment). A leaked marker would last LLM_TIMEOUT_MS + 30 s
 * (90 s here), far beyond this bounded wait.
 */
const turnWhenFree = (chatId: string, messages: ReadonlyArray<ChatMessage>) =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 100; attempt++) {
      const res = yield* postJson("/api/agent/chat", { chatId, messages })
      if (res.status !== 409) return res
      yield* Effect.sleep("20 millis")
    }
    return yield* Effect.die(new Error(`chat ${chatId} still answers 409 turn_in_flight: the marker leaked`))
  })

describe(`client hang-up (${backend})`, () => {
  layer(layerTestServer(fake.layer), { excludeTestServices: true })("real sockets", (it) => {
    it.effect("hanging up 0–3 ms after sending never blocks the chat; an accepted turn's message is stored", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        // A provider that takes a moment, so hang-ups land before, during and after it.
        fake.answerWith(() => Effect.sleep("2 millis").pipe(Effect.as({ content: "answer" })))
        const chatId = "hang-up"
        for (let i = 0; i < TRIES; i++) {
          const body = JSON.stringify({ chatId, messages: [user(`gone-${i}`, `hang up ${i}`)] })
          yield* hangUpAfterWrite(base, rawPost("/api/agent/chat", body), i % 4)
          const next = yield* turnWhenFree(chatId, [user(`stay-${i}`, `normal ${i}`)])
          assert.strictEqual(next.status, 200, `after hang-up ${i}: ${next.text}`)
        }

        const transcript = yield* request(`/api/chats/${chatId}/messages`)
        const ids: Array<string> = transcript.json.messages.map((m: ChatMessage) => m.id)
        for (let i = 0; i < TRIES; i++) assert.include(ids, `stay-${i}`)
        // Every hung-up turn that reached the provider had been accepted: its message is stored.
        const reached = new Set(fake.calls.flatMap((c) => c.messages.map((m) => m.id)).filter((id) => id.startsWith("gone-")))
        for (const id of reached) assert.include(ids, id, `${id} reached the provider but was not stored`)
        assert.strictEqual(new Set(ids).size, ids.length, "no message stored twice")
      }))
  })
})
