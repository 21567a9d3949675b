/**
 * The planner loop over a scripted `Planner` layer and the real host tools on
 * a temporary workdir: finish, fail, the step cap, bad decisions fed back,
 * planner failures retried with backoff (TestClock) then reported — and never
 * an action the planner did not choose.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Ref } from "effect"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import * as path from "node:path"
import { makeHostRegistry } from "../src/HostRegistry.ts"
import { Planner, PlannerError } from "../src/Planner.ts"
import type { Decision, DecisionRequest } from "../src/Planner.ts"
import { runPlannerLoop } from "../src/PlannerLoop.ts"
import type { LoopOptions, TaskResult } from "../src/PlannerLoop.ts"
import { startFakeServer, tempDir } from "@switchboard/client/testing"
import { ApiClient } from "@switchboard/client"
import * as CloudProxyPlanner from "../src/CloudProxyPlanner.ts"

type Step = Decision | PlannerError

/** Answers with the script in order; past its end, a non-retryable failure (a test bug shows as such). */
const scriptedPlanner = (script: ReadonlyArray<Step>) => {
  const requests: Array<DecisionRequest> = []
  const layer = Planner.layerTest((request) =>
    Effect.suspend(() => {
      requests.push(request)
      const step = script[requests.length - 1]
      if (step === undefined) return Effect.fail(new PlannerError({ message: "script exhausted", retryable: false }))
      return step instanceof PlannerError ? Effect.fail(step) : Effect.succeed(step)
    })
  )
  return { layer, requests }
}

const decide = (toolName: string, args: Record<string, unknown> = {}): Decision => ({ toolName, arguments: args })
const providerDown = new PlannerError({ message: "LLM provider error", code: "provider_error", status: 502, retryable: true })

const task = { taskId: "task_1", attempt: 1, goal: "write hello.txt saying hi" }

const setup = (overrides: Partial<LoopOptions> = {}) =>
  Effect.gen(function*() {
    const workdir = tempDir("switchboard-loop-")
    const { registry } = yield* makeHostRegistry({ workdir, shell: { allow: [], timeoutMs: 1000, maxOutputBytes: 1000 } })
    const lines: Array<string> = []
    const options: LoopOptions = {
      registry,
      workdir,
      maxSteps: 30,
      retries: 3,
      retryDelay: "1 second",
      log: (line) => Effect.sync(() => void lines.push(line)),
      ...overrides
    }
    const settled = yield* Ref.make<TaskResult | undefined>(undefined)
    return { workdir, options, lines, settled }
  })

describe("planner loop", () => {
  it.effect("write_file then finish: the task succeeds with the summary; each prompt carries the outcomes so far", () =>
    Effect.gen(function*() {
      const { lines, options, settled, workdir } = yield* setup()
      const planner = scriptedPlanner([
        decide("write_file", { path: "hello.txt", content: "hi" }),
        decide("finish", { summary: "wrote hello.txt" })
      ])
      const end = yield* runPlannerLoop(task, options, settled).pipe(Effect.provide(planner.layer))
      assert.deepStrictEqual(end, { _tag: "Result", result: { status: "succeeded", output: "wrote hello.txt", steps: 2 } })
      assert.deepStrictEqual(yield* Ref.get(settled), { status: "succeeded", output: "wrote hello.txt", steps: 2 })
      assert.strictEqual(fs.readFileSync(path.join(workdir, "hello.txt"), "utf8"), "hi")
      assert.strictEqual(planner.requests.length, 2)
      const [first, second] = planner.requests
      assert.include(first!.userPrompt, "Goal: write hello.txt saying hi")
      assert.include(first!.userPrompt, "No step has been taken yet.")
      assert.include(second!.userPrompt, '0. write_file {"path":"hello.txt","content":"hi"}')
      assert.include(second!.userPrompt, '→ ok: {"path":"hello.txt","bytes":2}')
      assert.include(first!.userPrompt, "This is step 0 (steps count from 0; at most 30 steps).")
      assert.include(second!.userPrompt, "This is step 1 (steps count from 0; at most 30 steps).")
      assert.deepStrictEqual(first!.tools.map((t) => t.name), ["finish", "fail", "read_file", "write_file"])
      assert.strictEqual(first!.attempt, 1)
      assert.isUndefined(first!.screenshot)
      assert.deepStrictEqual(lines, [
        'task task_1 step 0: write_file → ok: {"path":"hello.txt","bytes":2}',
        'task task_1 step 1: finish → ok: {"summary":"wrote hello.txt"}'
      ])
    }))

  it.effect("steps are numbered as the cloud's decision log numbers them: from 0, following each decision's stepIndex", () =>
    Effect.gen(function*() {
      const { lines, options, settled } = yield* setup()
      // The cloud recorded index 1 for a decision whose answer never arrived: the next one is 2.
      const planner = scriptedPlanner([
        { ...decide("read_file", { path: "missing.txt" }), stepIndex: 0 },
        { ...decide("finish", { summary: "done" }), stepIndex: 2 }
      ])
      yield* runPlannerLoop(task, options, settled).pipe(Effect.provide(planner.layer))
      assert.deepStrictEqual(lines.map((l) => l.split(":")[0]), ["task task_1 step 0", "task task_1 step 2"])
      assert.include(planner.requests[1]!.userPrompt, "0. read_file")
      assert.include(planner.requests[1]!.userPrompt, "This is step 1 ")
    }))

  it.effect("fail: the task fails with the planner's reason", () =>
    Effect.gen(function*() {
      const { options, settled } = yield* setup()
      const planner = scriptedPlanner([decide("fail", { reason: "no such printer" })])
      const end = yield* runPlannerLoop(task, options, settled).pipe(Effect.provide(planner.layer))
      assert.deepStrictEqual(end, { _tag: "Result", result: { status: "failed", output: "no such printer", steps: 1 } })
    }))

  it.effect("the step cap ends the task as failed after exactly max-steps decisions", () =>
    Effect.gen(function*() {
      const { options, settled } = yield* setup({ maxSteps: 3 })
      const planner = scriptedPlanner(Array.from({ length: 10 }, () => decide("read_file", { path: "missing.txt" })))
      const end = yield* runPlannerLoop(task, options, settled).pipe(Effect.provide(planner.layer))
      assert.strictEqual(planner.requests.length, 3)
      assert.deepStrictEqual(end, {
        _tag: "Result",
        result: { status: "failed", output: "step limit reached: 3 steps without finish or fail", steps: 3 }
      })
    }))

  it.effect("a decision with bad arguments or an unknown tool executes nothing; its error goes to the next step", () =>
    Effect.gen(function*() {
      const { options, settled, workdir } = yield* setup()
      const planner = scriptedPlanner([
        decide("write_file", { path: "a.txt" }),
        decide("delete_everything", {}),
        decide("finish", { summary: "gave up politely" })
      ])
      const end = yield* runPlannerLoop(task, options, settled).pipe(Effect.provide(planner.layer))
      assert.strictEqual(end._tag === "Result" && end.result.status, "succeeded")
      assert.deepStrictEqual(fs.readdirSync(workdir), [])
      const last = planner.requests[2]!.userPrompt
      assert.include(last, 'error: invalid decision: Missing required argument "content" (string)')
      assert.include(last, 'error: invalid decision: Unknown tool "delete_everything"')
    }))

  it.effect("a planner failure is retried with backoff, then the task is reported failed; no action is invented", () =>
    Effect.gen(function*() {
      const { lines, options, settled, workdir } = yield* setup()
      const planner = scriptedPlanner([providerDown, providerDown, providerDown, providerDown, decide("finish", { summary: "too late" })])
      const fiber = yield* runPlannerLoop(task, options, settled).pipe(Effect.provide(planner.layer), Effect.forkChild)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(planner.requests.length, 2, "first retry after 1 s")
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(planner.requests.length, 3, "second after 2 s more")
      yield* TestClock.adjust("4 seconds")
      const end = yield* Fiber.join(fiber)
      assert.strictEqual(planner.requests.length, 4, "one try and three retries, not the fifth scripted answer")
      assert.deepStrictEqual(end, {
        _tag: "Result",
        result: {
          status: "failed",
          output: "planner failed at step 0 after 4 tries (provider_error): LLM provider error",
          steps: 0
        }
      })
      assert.deepStrictEqual(fs.readdirSync(workdir), [])
      assert.deepStrictEqual(lines, [
        "task task_1 step 0: planner failed (provider_error): LLM provider error; retry 1/3 in 1s",
        "task task_1 step 0: planner failed (provider_error): LLM provider error; retry 2/3 in 2s",
        "task task_1 step 0: planner failed (provider_error): LLM provider error; retry 3/3 in 4s",
        "task task_1 step 0: planner failed (provider_error): LLM provider error; giving up"
      ])
    }))

  it.effect("a planner that recovers within the retries continues the task from the same step", () =>
    Effect.gen(function*() {
      const { options, settled } = yield* setup({ retryDelay: "10 millis" })
      const planner = scriptedPlanner([providerDown, decide("finish", { summary: "done" })])
      const fiber = yield* runPlannerLoop(task, options, settled).pipe(Effect.provide(planner.layer), Effect.forkChild)
      yield* TestClock.adjust("10 millis")
      const end = yield* Fiber.join(fiber)
      assert.deepStrictEqual(end, { _tag: "Result", result: { status: "succeeded", output: "done", steps: 1 } })
      assert.strictEqual(planner.requests[0]!.userPrompt, planner.requests[1]!.userPrompt, "the same step asked again")
    }))

  it.effect("rate-limited: asked again no sooner than the server's retryAfter, then the task goes on", () =>
    Effect.gen(function*() {
      const { options, settled } = yield* setup({ retryDelay: "10 millis" })
      const limited = new PlannerError({ message: "Too many decisions", code: "rate_limited", status: 429, retryable: true, retryAfterMs: 30_000 })
      const planner = scriptedPlanner([limited, decide("finish", { summary: "done" })])
      const fiber = yield* runPlannerLoop(task, options, settled).pipe(Effect.provide(planner.layer), Effect.forkChild)
      yield* TestClock.adjust("29 seconds")
      assert.strictEqual(planner.requests.length, 1, "not before retryAfter, though the backoff is 10 ms")
      yield* TestClock.adjust("1 second")
      const end = yield* Fiber.join(fiber)
      assert.strictEqual(planner.requests.length, 2)
      assert.deepStrictEqual(end, { _tag: "Result", result: { status: "succeeded", output: "done", steps: 1 } })
    }))

  it.live("over the cloud proxy, a busy replica's 503 overloaded is waited out (its retryAfter), then asked again", () =>
    Effect.gen(function*() {
      const { lines, options, settled } = yield* setup({ retryDelay: "10 millis" })
      const asked: Array<number> = []
      const server = yield* startFakeServer(() => {
        asked.push(Date.now())
        return asked.length === 1
          ? {
            status: 503,
            json: { error: "Too many planner decisions in flight on this replica", code: "overloaded", retryAfter: 1 },
            headers: { "retry-after": "1" }
          }
          : { json: { toolName: "finish", arguments: { summary: "done" }, stepIndex: 0 } }
      })
      const planner = CloudProxyPlanner.layerNoDeps("host_a").pipe(Layer.provide(ApiClient.layer({ baseUrl: server.url, token: "t" })))
      const end = yield* runPlannerLoop(task, options, settled).pipe(Effect.provide(planner))
      assert.deepStrictEqual(end, { _tag: "Result", result: { status: "succeeded", output: "done", steps: 1 } })
      assert.strictEqual(asked.length, 2)
      assert.isAtLeast(asked[1]! - asked[0]!, 950, "not before retryAfter, though the backoff is 10 ms")
      assert.include(
        lines[0],
        "task task_1 step 0: planner failed (overloaded): Switchboard is busy (too many turns at once); retry in 1 s; retry 1/3 in 1s"
      )
    }))

  it.effect("a refused request (not retryable) fails the task at once", () =>
    Effect.gen(function*() {
      const { options, settled } = yield* setup()
      const planner = scriptedPlanner([
        new PlannerError({ message: "tools[0].name: expected 1 to 64 characters", code: "invalid_request", status: 400, retryable: false })
      ])
      const end = yield* runPlannerLoop(task, options, settled).pipe(Effect.provide(planner.layer))
      assert.strictEqual(planner.requests.length, 1)
      assert.deepStrictEqual(end, {
        _tag: "Result",
        result: {
          status: "failed",
          output: "planner failed at step 0 after 1 try (invalid_request): tools[0].name: expected 1 to 64 characters",
          steps: 0
        }
      })
    }))

  it.effect("lease_lost (or 403: the task went to another host, or 409 task_cancelled) from the planner stops the loop without a result", () =>
    Effect.gen(function*() {
      for (const [code, status] of [["lease_lost", 409], ["forbidden", 403], ["task_cancelled", 409]] as const) {
        const { options, settled } = yield* setup()
        const planner = scriptedPlanner([new PlannerError({ message: "not yours", code, status, retryable: false })])
        const end = yield* runPlannerLoop(task, options, settled).pipe(Effect.provide(planner.layer))
        assert.deepStrictEqual(end, { _tag: "LeaseLost", message: "not yours", code }, code)
        assert.isUndefined(yield* Ref.get(settled))
      }
    }))

  it.effect("with a screenshot command, each request carries a PNG; a failed screenshot is said in the prompt", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const marker = path.join(dir, "count")
      // First run writes a PNG, the second fails: one request with, one without.
      const script = path.join(dir, "shot.mjs")
      fs.writeFileSync(script, [
        "import * as fs from 'node:fs'",
        `const marker = ${JSON.stringify(marker)}`,
        "if (fs.existsSync(marker)) { process.stderr.write('no display'); process.exit(1) }",
        "fs.writeFileSync(marker, '1')",
        "process.stdout.write(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]))"
      ].join("\n"))
      const { options, settled } = yield* setup({ screenshotCommand: `${process.execPath} ${script}` })
      const planner = scriptedPlanner([decide("read_file", { path: "x" }), decide("finish", { summary: "ok" })])
      yield* runPlannerLoop(task, options, settled).pipe(Effect.provide(planner.layer))
      assert.deepStrictEqual(planner.requests[0]!.screenshot, {
        mediaType: "image/png",
        data: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]).toString("base64")
      })
      assert.isUndefined(planner.requests[1]!.screenshot)
      assert.include(planner.requests[1]!.userPrompt, "(No screenshot this step:")
      assert.include(planner.requests[1]!.userPrompt, "no display")
    }))
})
