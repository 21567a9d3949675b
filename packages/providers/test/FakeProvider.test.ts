/**
 * The in-memory fake adapter the server's tests use: its stream follows
 * `answerWith` in one delta unless the test scripts the stream itself.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Stream } from "effect"
import { TestClock } from "effect/testing"
import { eventsOf, ProviderAdapter, ProviderError } from "../src/ProviderAdapter.ts"
import type { ProviderStreamEvent } from "../src/ProviderAdapter.ts"
import { makeFakeProvider } from "../src/testing/FakeProvider.ts"
import { params, user } from "./Messages.ts"
import { runStream, streamFailure } from "./StreamChecks.ts"

const streamed = (fake: ReturnType<typeof makeFakeProvider>, text: string) =>
  ProviderAdapter.use((adapter) => Stream.runCollect(eventsOf(adapter.streamTo, params([user(text)])))).pipe(Effect.provide(fake.layer))

describe("FakeProvider", () => {
  it.effect("streams the answerWith answer in one delta by default, recording the call", () =>
    Effect.gen(function*() {
      const fake = makeFakeProvider()
      fake.answerWith(() => Effect.succeed({ content: "whole" }))
      assert.deepStrictEqual(yield* streamed(fake, "hi"), [
        { type: "text-delta", delta: "whole" },
        { type: "finish", response: { content: "whole" } }
      ])
      assert.strictEqual(fake.calls.length, 1)
    }))

  it.effect("streamWith scripts the stream: deltas, pauses, a failure midway; undefined goes back to the answer", () =>
    Effect.gen(function*() {
      const fake = makeFakeProvider()
      const events: ReadonlyArray<ProviderStreamEvent> = [
        { type: "text-delta", delta: "Hel" },
        { type: "text-delta", delta: "lo" },
        { type: "finish", response: { content: "Hello" } }
      ]
      fake.streamWith(() => Stream.fromIterable(events).pipe(Stream.tap(() => Effect.sleep("10 millis"))))
      const fiber = yield* Effect.forkChild(streamed(fake, "slow"))
      yield* TestClock.adjust("30 millis")
      assert.deepStrictEqual(yield* Fiber.join(fiber), events)

      fake.streamWith(() =>
        Stream.concat(Stream.make({ type: "text-delta" as const, delta: "Hel" }), Stream.fail(new ProviderError({ reason: "Network", message: "cut" })))
      )
      const cut = yield* ProviderAdapter.use((adapter) => runStream(eventsOf(adapter.streamTo, params([user("cut")])))).pipe(Effect.provide(fake.layer))
      assert.strictEqual(streamFailure(cut).reason, "Network")
      assert.deepStrictEqual(cut.events, [{ type: "text-delta", delta: "Hel" }])

      fake.streamWith(undefined)
      assert.strictEqual((yield* streamed(fake, "back")).length, 2)
      assert.deepStrictEqual(fake.calls.map((c) => c.messages[0]?.content), ["slow", "cut", "back"])
    }))
})
