import { assert, describe, it } from "@effect/vitest"
import { Effect, Ref } from "effect"
import { SqlError } from "effect/sql"
import { retryDeadlock } from "../../src/db/RetryDeadlock.ts"

const deadlock = () =>
  new SqlError.SqlError({ reason: new SqlError.DeadlockError({ cause: new Error("deadlock detected"), message: "Query failed" }) })
const syntax = () =>
  new SqlError.SqlError({ reason: new SqlError.SqlSyntaxError({ cause: new Error("syntax error"), message: "Query failed" }) })

/** A statement that fails with `failures[i]` on its i-th run, then succeeds with the run count. */
const statement = (runs: Ref.Ref<number>, failures: ReadonlyArray<() => SqlError.SqlError>) =>
  Ref.updateAndGet(runs, (n) => n + 1).pipe(
    Effect.flatMap((n) => n <= failures.length ? Effect.fail(failures[n - 1]!()) : Effect.succeed(n))
  )

describe("a statement chosen as a deadlock victim", () => {
  it.live("is run again until it goes through", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      assert.strictEqual(yield* retryDeadlock(statement(runs, [deadlock, deadlock])), 3)
    }))

  it.live("gives up after four more tries, with the deadlock", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      const error = yield* Effect.flip(retryDeadlock(statement(runs, Array.from({ length: 9 }, () => deadlock))))
      assert.strictEqual(error.reason._tag, "DeadlockError")
      assert.strictEqual(yield* Ref.get(runs), 5)
    }))

  it.live("any other failure is not retried", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      const error = yield* Effect.flip(retryDeadlock(statement(runs, [syntax])))
      assert.strictEqual(error.reason._tag, "SqlSyntaxError")
      assert.strictEqual(yield* Ref.get(runs), 1)
    }))
})
