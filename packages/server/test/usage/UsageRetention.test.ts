/**
 * The usage retention (docs/usage.md, "Retention and size"): a
 * `PLANNER_DECISION_RETENTION` shorter than a budget's window deletes the
 * hours before the window, never the window's own — a host's budget reads the
 * current hour and the 24 before it, and must find them all.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { DecisionRetention } from "../../src/planner/DecisionRetention.ts"
import { DecisionsRepo } from "../../src/planner/DecisionsRepo.ts"
import { windowStart } from "../../src/usage/BudgetWindow.ts"
import { HOUR_MS, UsageRepo } from "../../src/usage/UsageRepo.ts"
import { TestDatabase } from "../support/TestDatabase.ts"

const retention = (value: string) =>
  DecisionRetention.layer.pipe(
    Layer.provide([DecisionsRepo.layer, UsageRepo.layer]),
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ PLANNER_DECISION_RETENTION: value }))),
    Layer.provideMerge(TestDatabase)
  )

describe("usage retention", () => {
  it.live("a retention of one hour keeps every hour of the budget's window and deletes the hour before it", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const start = windowStart(Date.now())
      const hours = [start - HOUR_MS, start, start + 12 * HOUR_MS, start + 24 * HOUR_MS]
      for (const [i, hour] of hours.entries()) {
        yield* sql`
          INSERT INTO usage_hourly (hour, kind, host_id, calls, input_tokens, output_tokens, cached_input_tokens)
          VALUES (${new Date(hour).toISOString()}::timestamptz, 'planner', ${`host-${i}`}, 1, 10, 1, 0)`
      }
      assert.strictEqual(yield* (yield* DecisionRetention).pruneUsage, 1)
      const left = yield* sql<{ host_id: string }>`SELECT host_id FROM usage_hourly ORDER BY hour`
      assert.deepStrictEqual(left.map((r) => r.host_id), ["host-1", "host-2", "host-3"])
    }).pipe(Effect.provide(retention("1 hour"))))
})
