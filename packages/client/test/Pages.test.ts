import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { allPages } from "../src/api/Pages.ts"

describe("allPages", () => {
  it.effect("asks for each page after the last one's nextAfter, until a page has none; the rows in order", () =>
    Effect.gen(function*() {
      const pages: Record<string, { rows: Array<number>; nextAfter?: string }> = {
        first: { rows: [1, 2], nextAfter: "2" },
        "2": { rows: [3, 4], nextAfter: "4" },
        "4": { rows: [5] }
      }
      const asked: Array<string | undefined> = []
      const all = yield* allPages(({ after }) => Effect.sync(() => (asked.push(after), pages[after ?? "first"]!)), (page) => page.rows)
      assert.deepStrictEqual(all, [1, 2, 3, 4, 5])
      assert.deepStrictEqual(asked, [undefined, "2", "4"])
    }))

  it.effect("a failed page fails the whole", () =>
    Effect.gen(function*() {
      const failed = yield* Effect.flip(allPages(
        ({ after }) => after === undefined ? Effect.succeed({ rows: [1], nextAfter: "1" }) : Effect.fail("gone"),
        (page: { rows: Array<number>; nextAfter?: string }) => page.rows
      ))
      assert.strictEqual(failed, "gone")
    }))
})
