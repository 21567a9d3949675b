import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { reportStatus } from "../src/cli/StatusReporter.ts"
import { makeAgentStore, memoryStorage } from "@switchboard/client"

describe("status reporter", () => {
  it.effect("writes one line per status change while subscribed, and stops after", () =>
    Effect.gen(function*() {
      const store = makeAgentStore(memoryStorage())
      const lines: Array<string> = []
      yield* Effect.scoped(Effect.gen(function*() {
        yield* reportStatus(store, { isTTY: false, write: (t) => lines.push(t) })
        const s = store.getState()
        s.setStatus("sending")
        s.setStatus("processing")
        s.setActiveTool("transcribe_video")
        s.setActiveTool(null)
        s.setStatus("sending")
        s.setStatus("responding")
        s.setStatus("idle")
      }))
      store.getState().setStatus("sending")
      assert.deepStrictEqual(lines, [
        "[switchboard] sending to the model…\n",
        // "processing" before a tool is active keeps the previous line: no flicker
        "[switchboard] running tool transcribe_video…\n",
        "[switchboard] sending to the model…\n",
        "[switchboard] responding…\n"
      ])
    }))

  it.effect("on a terminal, rewrites one line, clears it while the agent responds (the answer streams there) and at the end", () =>
    Effect.gen(function*() {
      const store = makeAgentStore(memoryStorage())
      let out = ""
      yield* Effect.scoped(Effect.gen(function*() {
        yield* reportStatus(store, { isTTY: true, write: (t) => (out += t) })
        store.getState().setStatus("sending")
        store.getState().setStatus("responding")
      }))
      assert.strictEqual(out, "\r\u001b[2Ksending to the model…\r\u001b[2K")
    }))
})
