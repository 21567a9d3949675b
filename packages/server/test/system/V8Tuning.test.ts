import { assert, describe, it } from "@effect/vitest"
import { v8TuningFor } from "../../src/system/V8Tuning.ts"

describe("v8TuningFor", () => {
  it("by default: pretenuring off, the old generation's growth capped at 20 %", () => {
    assert.deepStrictEqual(v8TuningFor({}), {
      _tag: "Flags",
      flags: ["--no-allocation-site-pretenuring", "--heap-growing-percent=20"]
    })
  })

  it("PRETENURING=on keeps pretenuring; HEAP_GROWING_PERCENT sets the cap, 0 leaves V8's own growth", () => {
    assert.deepStrictEqual(v8TuningFor({ PRETENURING: "on", HEAP_GROWING_PERCENT: "50" }), { _tag: "Flags", flags: ["--heap-growing-percent=50"] })
    assert.deepStrictEqual(v8TuningFor({ HEAP_GROWING_PERCENT: "0" }), { _tag: "Flags", flags: ["--no-allocation-site-pretenuring"] })
  })

  it("a value that is not a whole number of percent is refused, naming the variable", () => {
    for (const value of ["", "-5", "12.5", "twenty", "20 --expose-gc"]) {
      const tuning = v8TuningFor({ HEAP_GROWING_PERCENT: value })
      assert.strictEqual(tuning._tag, "Invalid", value)
      if (tuning._tag === "Invalid") assert.include(tuning.message, "HEAP_GROWING_PERCENT")
    }
  })
})
