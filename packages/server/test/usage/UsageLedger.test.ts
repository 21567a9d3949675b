/**
 * The usage ledger on its own (docs/usage.md, "Across replicas, and what a
 * crash loses"), over a stand-in repository: counts of one key add up in one
 * row, a flush that fails keeps its counts for the next one, a host's
 * unflushed tokens are in its budget's reading, and closing the ledger
 * flushes what is left.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { UsageLedger } from "../../src/usage/UsageLedger.ts"
import { hourOf, UsageRepo } from "../../src/usage/UsageRepo.ts"
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
      assert.deepStrictEqual(ledger.pending("host_1", from), { used: 60, oldestHour: hourOf(Date.now()) })
      assert.deepStrictEqual(ledger.pending("host_2", from), { used: 0, oldestHour: undefined })

      repo.state.failing = true
      yield* ledger.flush
      assert.strictEqual(repo.written.length, 0)
      assert.strictEqual(ledger.pending("host_1", from).used, 60, "kept for the next flush")

      repo.state.failing = false
      yield* ledger.flush
      assert.strictEqual(repo.written.length, 2, "one row per key")
      const plannerRow = repo.written.find(([key]) => key.kind === "planner")!
      assert.deepStrictEqual(plannerRow[1], { calls: 2, inputTokens: 50, outputTokens: 10, cachedInputTokens: 10 })
      assert.deepInclude(plannerRow[0], { hostId: "host_1", taskId: "task_1", profileId: "prof_1", model: "gpt-planner", chatId: "" })
      const chatRow = repo.written.find(([key]) => key.kind === "chat")!
      assert.deepStrictEqual(chatRow[1], { calls: 1, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 })
      assert.strictEqual(ledger.pending("host_1", from).used, 0, "in the database now")

      ledger.count(planner, "gpt-planner", { inputTokens: 1, outputTokens: 1 })
      yield* Scope.close(scope, Exit.void)
      assert.strictEqual(repo.written.length, 3, "closing flushed the last count")
    }))
})
