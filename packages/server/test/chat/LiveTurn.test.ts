/**
 * A running turn's stream in memory (chat/LiveTurn.ts): readers from the
 * first event at any time, the terminal chunk then `[DONE]`, a keep-alive
 * comment when nothing comes, and one buffer whatever the number of readers.
 */
import { assert, describe, it } from "@effect/vitest"
import { SSE_DONE, SSE_KEEP_ALIVE, sseEvent } from "@switchboard/domain"
import { Duration, Effect, Fiber } from "effect"
import type { Readable } from "node:stream"
import { eventsReadable, makeLiveTurn, publish } from "../../src/chat/stream/LiveTurn.ts"
import { storedChatKey } from "../../src/users/ChatKey.ts"

/** Everything a reader's body carries, split back into its events as written. */
const readAll = (readable: Readable) =>
  Effect.promise(async () => {
    const events: Array<string> = []
    for await (const piece of readable) {
      for (const event of String(piece).split(/(?<=\n\n)/u)) if (event !== "") events.push(event)
    }
    return events
  })

describe("LiveTurn", () => {
  it.live("a reader that comes late reads from the first event; every reader ends at the terminal chunk and [DONE]", () =>
    Effect.gen(function*() {
      const live = yield* makeLiveTurn(storedChatKey("c1"), "m1", true)
      publish(live, { type: "start", messageId: "m1" })
      const early = yield* readAll(eventsReadable(live)).pipe(Effect.forkChild)
      publish(live, { type: "text-delta", id: "t", delta: "a" })
      yield* Effect.sleep("10 millis")
      publish(live, { type: "text-delta", id: "t", delta: "b" })
      const late = yield* readAll(eventsReadable(live)).pipe(Effect.forkChild)
      publish(live, { type: "finish" })
      publish(live, { type: "text-delta", id: "t", delta: "after the end" })
      const expected = [
        sseEvent({ type: "start", messageId: "m1" }),
        sseEvent({ type: "text-delta", id: "t", delta: "a" }),
        sseEvent({ type: "text-delta", id: "t", delta: "b" }),
        sseEvent({ type: "finish" }),
        SSE_DONE
      ]
      assert.deepStrictEqual(yield* Fiber.join(early), expected)
      assert.deepStrictEqual(yield* Fiber.join(late), expected)
      assert.strictEqual(live.events.length, 4, "one buffer for both readers; nothing after the terminal chunk")
    }))

  it.live("a continuation announces the message it extends to its requester, its own message to a follower", () =>
    Effect.gen(function*() {
      // The turn's answer is stored as m2; its stream extends m1, which the requester holds.
      const live = yield* makeLiveTurn(storedChatKey("c1"), "m2", true, "m1")
      publish(live, { type: "start", messageId: "m1" })
      publish(live, { type: "text-delta", id: "t", delta: "a" })
      publish(live, { type: "finish" })
      const [requester, follower] = yield* Effect.all([readAll(eventsReadable(live)), readAll(eventsReadable(live, true))])
      assert.strictEqual(requester[0], sseEvent({ type: "start", messageId: "m1" }))
      assert.deepStrictEqual(follower, [sseEvent({ type: "start", messageId: "m2" }), ...requester.slice(1)])
      // Not a continuation: both the same.
      const plain = yield* makeLiveTurn(storedChatKey("c1"), "m3", true)
      publish(plain, { type: "start", messageId: "m3" })
      publish(plain, { type: "finish" })
      assert.deepStrictEqual(yield* readAll(eventsReadable(plain, true)), yield* readAll(eventsReadable(plain)))
    }))

  it.live("a quiet stream sends keep-alive comments and still ends", () =>
    Effect.gen(function*() {
      const live = yield* makeLiveTurn(storedChatKey("c1"), "m1", true)
      publish(live, { type: "start", messageId: "m1" })
      const reader = yield* readAll(eventsReadable(live, false, Duration.millis(30))).pipe(Effect.forkChild)
      yield* Effect.sleep("140 millis")
      publish(live, { type: "error", errorText: "LLM provider error" })
      const events = yield* Fiber.join(reader)
      assert.isAtLeast(events.filter((e) => e === SSE_KEEP_ALIVE).length, 2)
      assert.deepStrictEqual(events.filter((e) => e !== SSE_KEEP_ALIVE), [
        sseEvent({ type: "start", messageId: "m1" }),
        sseEvent({ type: "error", errorText: "LLM provider error" }),
        SSE_DONE
      ])
    }))
})
