import { assert, describe, it } from "@effect/vitest"
import { Effect, Logger } from "effect"
import { batchedJsonLogger } from "../../src/system/BatchedLog.ts"
import { eventually } from "../support/JobsHelpers.ts"

describe("batched JSON log", () => {
  it.effect("writes every line, in order, as one JSON object per line, in one write per batch; the rest when its scope closes", () =>
    Effect.gen(function*() {
      const writes: Array<string> = []
      yield* Effect.scoped(Effect.gen(function*() {
        const logger = yield* batchedJsonLogger({ write: (chunk) => writes.push(chunk), window: "1 hour" })
        const logged = Effect.provide(Logger.layer([logger]))
        for (let i = 1; i <= 3; i++) {
          yield* Effect.logInfo(`request ${i}`).pipe(Effect.annotateLogs({ "http.status": 200 + i }), logged)
        }
        assert.deepStrictEqual(writes, [], "nothing is written before the window ends")
      }))
      assert.strictEqual(writes.length, 1, "one write for the batch")
      const lines = writes[0]!.split("\n")
      assert.strictEqual(lines.pop(), "", "the batch ends with a newline")
      const entries = lines.map((line) => JSON.parse(line) as { message: unknown; level: string; annotations: Record<string, unknown> })
      assert.deepStrictEqual(entries.map((e) => e.message), ["request 1", "request 2", "request 3"])
      assert.deepStrictEqual(entries.map((e) => e.annotations["http.status"]), [201, 202, 203])
      assert.isTrue(entries.every((e) => e.level === "INFO"))
    }))

  it.live("writes a batch once its window after the first line ends, and starts a new window with the next line", () =>
    Effect.gen(function*() {
      const writes: Array<string> = []
      const waitFor = (count: number) => eventually(Effect.sync(() => writes.length), (n) => n >= count, `${count} writes`, 3_000)
      yield* Effect.scoped(Effect.gen(function*() {
        const logger = yield* batchedJsonLogger({ write: (chunk) => writes.push(chunk), window: "20 millis" })
        const logged = Effect.provide(Logger.layer([logger]))
        yield* Effect.logInfo("first").pipe(logged)
        yield* Effect.logInfo("second").pipe(logged)
        yield* waitFor(1)
        assert.strictEqual(writes.length, 1, "the window's two lines in one write, without the scope closing")
        yield* Effect.logInfo("third").pipe(logged)
        yield* waitFor(2)
        assert.strictEqual(writes.length, 2, "a later line opens a new window")
      }))
      assert.strictEqual(writes.length, 2, "nothing left to write when the scope closes")
      const messages = writes.map((chunk) => chunk.trim().split("\n").map((line) => (JSON.parse(line) as { message: unknown }).message))
      assert.deepStrictEqual(messages, [["first", "second"], ["third"]])
    }))

  it.live("a destination that throws loses its batch, not the process", () =>
    Effect.gen(function*() {
      let calls = 0
      yield* Effect.scoped(Effect.gen(function*() {
        const logger = yield* batchedJsonLogger({
          write: () => {
            calls++
            throw new Error("EPIPE")
          },
          window: "5 millis"
        })
        yield* Effect.logInfo("lost").pipe(Effect.provide(Logger.layer([logger])))
        yield* eventually(Effect.sync(() => calls), (n) => n >= 1, "the batch's write", 3_000)
      }))
      assert.strictEqual(calls, 1, "the batch was written once, in its timer, and the throw went no further")
    }))
})
