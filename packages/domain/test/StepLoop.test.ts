import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import type { ToolCall } from "../src/Chat.ts"
import { hasToolCall, othersPending, runSteps, stepCountIs } from "../src/StepLoop.ts"

const call = (name: string, id = name): ToolCall => ({ id, name, args: {} })

/** A model that answers with each step's calls in turn; what the loop ran is recorded. */
const scripted = (steps: ReadonlyArray<ReadonlyArray<ToolCall>>) => {
  const ran: Array<string> = []
  const asked: Array<number> = []
  return {
    ran,
    asked,
    ask: (step: number) =>
      Effect.sync(() => {
        asked.push(step)
        return { toolCalls: steps[step - 1] ?? [] }
      }),
    run: ({ owned }: { readonly owned: ReadonlyArray<ToolCall> }) =>
      Effect.sync(() => {
        ran.push(...owned.map((c) => c.id))
        return owned.length
      })
  }
}

describe("runSteps: the one step loop", () => {
  it.effect("runs the owned calls and asks again until an answer calls none", () =>
    Effect.gen(function*() {
      const model = scripted([[call("a")], [call("b"), call("c")], []])
      const end = yield* runSteps({ ...model, owns: () => true, stopWhen: [stepCountIs(8, "cap")] })
      assert.strictEqual(end.reason, "answered")
      assert.strictEqual(end.step, 3)
      assert.deepStrictEqual(model.ran, ["a", "b", "c"])
      assert.deepStrictEqual(model.asked, [1, 2, 3])
    }))

  it.effect("an answer whose calls are all someone else's ends the loop, none of them run", () =>
    Effect.gen(function*() {
      const model = scripted([[call("client_tool")]])
      const end = yield* runSteps({ ...model, owns: (c) => c.name.startsWith("server"), stopWhen: [stepCountIs(8, "cap")] })
      assert.strictEqual(end.reason, "answered")
      assert.deepStrictEqual(end.others.map((c) => c.id), ["client_tool"])
      assert.deepStrictEqual(model.ran, [])
    }))

  it.effect("a mixed answer runs its own calls, then stops with the others pending", () =>
    Effect.gen(function*() {
      const model = scripted([[call("server_a"), call("client_b")], [call("server_c")]])
      const end = yield* runSteps({
        ...model,
        owns: (c) => c.name.startsWith("server"),
        stopWhen: [othersPending("pending"), stepCountIs(8, "cap")]
      })
      assert.strictEqual(end.reason, "pending")
      assert.strictEqual(end.step, 1)
      assert.deepStrictEqual(model.ran, ["server_a"])
      assert.strictEqual(end.ran, 1)
    }))

  it.effect("the cap stops after the capped step's calls ran; the first condition that holds names the end", () =>
    Effect.gen(function*() {
      const model = scripted(Array.from({ length: 20 }, (_, i) => [call("t", `t${i + 1}`)]))
      const end = yield* runSteps({ ...model, owns: () => true, stopWhen: [hasToolCall("submit_result", "submitted"), stepCountIs(3, "cap")] })
      assert.strictEqual(end.reason, "cap")
      assert.deepStrictEqual(model.ran, ["t1", "t2", "t3"])
      const submitted = scripted([[call("t")], [call("submit_result")], [call("t")]])
      const done = yield* runSteps({ ...submitted, owns: () => true, stopWhen: [hasToolCall("submit_result", "submitted"), stepCountIs(3, "cap")] })
      assert.strictEqual(done.reason, "submitted")
      assert.strictEqual(done.step, 2)
    }))

  it.effect("stopBefore ends the loop on the answer, its calls not run", () =>
    Effect.gen(function*() {
      const model = scripted([[call("a")], [call("b")]])
      const end = yield* runSteps({
        ...model,
        owns: () => true,
        stopBefore: [{ reason: "cap", when: (s) => s.step >= 2 && s.owned.length > 0 }],
        stopWhen: [stepCountIs(8, "cap")]
      })
      assert.strictEqual(end.reason, "cap")
      assert.strictEqual(end.step, 2)
      assert.deepStrictEqual(model.ran, ["a"])
      assert.strictEqual(end.ran, undefined)
    }))

  it.effect("a failed ask or run fails the loop with its error", () =>
    Effect.gen(function*() {
      const failing = yield* runSteps({
        ask: () => Effect.fail("provider down" as const),
        owns: () => true,
        run: () => Effect.succeed(0),
        stopWhen: [stepCountIs(8, "cap")]
      }).pipe(Effect.flip)
      assert.strictEqual(failing, "provider down")
    }))

  it.effect("atomic: an interruption while a step is under way lands after its calls ran", () =>
    Effect.gen(function*() {
      const answer = yield* Deferred.make<{ readonly toolCalls: ReadonlyArray<ToolCall> }>()
      const ran: Array<string> = []
      const loop = yield* runSteps({
        ask: () => Deferred.await(answer),
        owns: () => true,
        run: ({ owned }) => Effect.sync(() => ran.push(...owned.map((c) => c.id))),
        stopWhen: [stepCountIs(8, "cap")],
        atomic: true
      }).pipe(Effect.forkChild({ startImmediately: true }))
      const interrupting = yield* Fiber.interrupt(loop).pipe(Effect.forkChild({ startImmediately: true }))
      yield* Deferred.succeed(answer, { toolCalls: [call("a")] })
      yield* Fiber.join(interrupting)
      assert.deepStrictEqual(ran, ["a"])
    }))
})
