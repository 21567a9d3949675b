/**
 * The usage ledger on its own (docs/usage.md, "Across replicas, and what a
 * crash loses"), over a stand-in repository: counts of one key add up in one
 * row, a flush that fails keeps its counts for the next one, a host's
 * unflushed tokens are in its budget's reading, and closing the ledger
 * flushes what is left.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Fiber, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { MAX_CALL_TOKENS, UsageLedger } from "../../src/usage/UsageLedger.ts"
import { hourOf, UsageRepo } from "../../src/usage/UsageRepo.ts"
import { TestDatabase } from "../support/TestDatabase.ts"
import type { UsageKey, UsageTotals } from "../../src/usage/UsageRepo.ts"

const makeRepo = () => {
  const written: Array<readonly [UsageKey, UsageTotals]> = []
  const state = { failing: false }
  const layer = Layer.mock(UsageRepo, {
    add: (entries) =>
      Effect.suspend(() => {
        if (state.failing) return Effect.die(new Error("connection refused"))
        written.push(...entries.map(([key, totals]) => [key, { ...totals }] as const))
        return Effect.void
      })
  })
  return { written, state, layer }
}

const planner = { kind: "planner" as const, hostId: "host_1", taskId: "task_1", profileId: "prof_1" }

describe("usage ledger", () => {
  it.effect("counts of one key are one row; a failed flush keeps them; a host's unflushed tokens are pending; closing flushes", () =>
    Effect.gen(function*() {
      const repo = makeRepo()
      const scope = yield* Scope.make()
      // A flush every hour: only the explicit ones (and the close) write.
      const context = yield* Layer.buildWithScope(UsageLedger.make("1 hour").pipe(Layer.provide(repo.layer)), scope)
      const ledger = Context.get(context, UsageLedger)

      ledger.count(planner, "gpt-planner", { inputTokens: 30, outputTokens: 5, cachedInputTokens: 10 })
      ledger.count(planner, "gpt-planner", { inputTokens: 20, outputTokens: 5 })
      ledger.count({ kind: "chat", chatId: "c1" }, "chat-model", undefined)
      const from = hourOf(Date.now()) - 24 * 3_600_000
      assert.deepStrictEqual(ledger.pending((key) => key.hostId === "host_1", from), { used: 60, oldestHour: hourOf(Date.now()) })
      assert.deepStrictEqual(ledger.pending((key) => key.hostId === "host_2", from), { used: 0, oldestHour: undefined })

      repo.state.failing = true
      yield* ledger.flush
      assert.strictEqual(repo.written.length, 0)
      assert.strictEqual(ledger.pending((key) => key.hostId === "host_1", from).used, 60, "kept for the next flush")

      repo.state.failing = false
      yield* ledger.flush
      assert.strictEqual(repo.written.length, 2, "one row per key")
      const plannerRow = repo.written.find(([key]) => key.kind === "planner")!
      assert.deepStrictEqual(plannerRow[1], { calls: 2, inputTokens: 50, outputTokens: 10, cachedInputTokens: 10 })
      assert.deepInclude(plannerRow[0], { hostId: "host_1", taskId: "task_1", profileId: "prof_1", model: "gpt-planner", chatId: "" })
      const chatRow = repo.written.find(([key]) => key.kind === "chat")!
      assert.deepStrictEqual(chatRow[1], { calls: 1, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 })
      assert.strictEqual(ledger.pending((key) => key.hostId === "host_1", from).used, 0, "in the database now")

      ledger.count(planner, "gpt-planner", { inputTokens: 1, outputTokens: 1 })
      yield* Scope.close(scope, Exit.void)
      assert.strictEqual(repo.written.length, 3, "closing flushed the last count")
    }))

  it.effect("one flush at a time, in the keys' order: a second waits for the first, and a host's tokens stay pending until stored", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const batches: Array<ReadonlyArray<string>> = []
      let running = 0
      let most = 0
      const repo = Layer.mock(UsageRepo, {
        add: (entries) =>
          Effect.gen(function*() {
            running++
            most = Math.max(most, running)
            batches.push(entries.map(([key]) => key.chatId))
            if (batches.length === 1) yield* Deferred.await(release)
            running--
          })
      })
      const ledger = Context.get(yield* Layer.build(UsageLedger.make("1 hour").pipe(Layer.provide(repo))), UsageLedger)
      for (const chatId of ["c3", "c1", "c2"]) ledger.count({ kind: "chat", chatId }, "m", { inputTokens: 1, outputTokens: 0 })
      ledger.count(planner, "gpt-planner", { inputTokens: 7, outputTokens: 0 })
      const from = hourOf(Date.now()) - 24 * 3_600_000
      const first = yield* Effect.forkChild(ledger.flush)
      yield* Effect.yieldNow
      ledger.count({ kind: "chat", chatId: "c0" }, "m", { inputTokens: 1, outputTokens: 0 })
      const second = yield* Effect.forkChild(ledger.flush)
      yield* Effect.yieldNow
      // The first is still writing: the host's tokens are still this replica's to count.
      assert.strictEqual(ledger.pending((key) => key.hostId === "host_1", from).used, 7)
      assert.strictEqual(batches.length, 1, "the second flush waits")
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(first)
      yield* Fiber.join(second)
      assert.strictEqual(most, 1)
      // Sorted by key: the same order on every replica.
      assert.deepStrictEqual(batches, [["c1", "c2", "c3", ""], ["c0"]])
      assert.strictEqual(ledger.pending((key) => key.hostId === "host_1", from).used, 0)
    }).pipe(Effect.scoped))
})

describe("usage ledger, stored", () => {
  it.effect("a provider's absurd token count is stored as the most one call may count, and does not stop the flushes", () =>
    Effect.gen(function*() {
      const ledger = yield* UsageLedger
      const sql = yield* SqlClient.SqlClient
      ledger.count({ kind: "chat", chatId: "absurd" }, "m", { inputTokens: 1e20, outputTokens: 1e25, cachedInputTokens: Infinity })
      yield* ledger.flush
      ledger.count({ kind: "chat", chatId: "absurd" }, "m", { inputTokens: 1, outputTokens: 2 })
      yield* ledger.flush
      const rows = yield* sql<{ calls: number; input_tokens: string; output_tokens: string; cached_input_tokens: string }>`
        SELECT calls, input_tokens::text, output_tokens::text, cached_input_tokens::text FROM usage_hourly WHERE chat_id = 'absurd'`
      assert.deepStrictEqual(rows.map((r) => [Number(r.calls), r.input_tokens, r.output_tokens, r.cached_input_tokens]), [
        [2, String(MAX_CALL_TOKENS + 1), String(MAX_CALL_TOKENS + 2), "0"]
      ])
    }).pipe(Effect.provide(UsageLedger.make("1 hour").pipe(Layer.provideMerge(UsageRepo.layer), Layer.provideMerge(TestDatabase)))))
})
