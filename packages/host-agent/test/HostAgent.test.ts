/**
 * The host agent over a fake `ControlPlane` and a scripted `Planner`: claim
 * polling with backoff on 204, the lease renewed while working, a lost lease
 * stopping the task without a result, a refused token stopping the agent,
 * and an interruption (what SIGTERM does) finishing the current step and
 * reporting the task failed with "host shutting down".
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import type { Layer } from "effect"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import * as path from "node:path"
import { ControlPlane, ControlPlaneError } from "../src/ControlPlane.ts"
import type { ClaimedTask, ReportedResult, TaskAttempt } from "../src/ControlPlane.ts"
import { runHostAgent, shutdownReason } from "../src/HostAgent.ts"
import type { HostAgentOptions } from "../src/HostAgent.ts"
import { makeHostRegistry } from "../src/HostRegistry.ts"
import { Planner, PlannerError } from "../src/Planner.ts"
import type { Decision, DecisionRequest } from "../src/Planner.ts"
import { tempDir } from "@switchboard/client/testing"

const claimed = (leaseMs: number, now = 0): ClaimedTask => ({
  taskId: "task_1",
  attempt: 1,
  goal: "write a file",
  leaseExpiresAt: new Date(now + leaseMs).toISOString()
})

interface FakeCloud {
  claims: number
  renewals: Array<TaskAttempt>
  results: Array<{ task: TaskAttempt; result: ReportedResult }>
}

const fakeControlPlane = (options: {
  readonly queue: ReadonlyArray<ClaimedTask | undefined>
  readonly heartbeat?: Effect.Effect<string, ControlPlaneError>
  readonly renew?: (n: number) => Effect.Effect<string, ControlPlaneError>
  readonly report?: Effect.Effect<void, ControlPlaneError>
}) => {
  const cloud: FakeCloud = { claims: 0, renewals: [], results: [] }
  const layer = ControlPlane.layerTest({
    heartbeat: options.heartbeat ?? Effect.succeed(new Date(0).toISOString()),
    claim: Effect.sync(() => options.queue[cloud.claims++]),
    renewLease: (task) =>
      Effect.suspend(() => {
        cloud.renewals.push(task)
        return options.renew?.(cloud.renewals.length) ?? Effect.succeed(new Date(60_000).toISOString())
      }),
    reportResult: (task, result) => options.report ?? Effect.sync(() => void cloud.results.push({ task, result }))
  })
  return { cloud, layer }
}

const agentOptions = (overrides: { readonly maxSteps?: number } = {}) =>
  Effect.gen(function*() {
    const workdir = tempDir("switchboard-agent-")
    const { registry } = yield* makeHostRegistry({ workdir, shell: { allow: [], timeoutMs: 1000, maxOutputBytes: 1000 } })
    const lines: Array<string> = []
    const options: HostAgentOptions = {
      loop: {
        registry,
        workdir,
        maxSteps: overrides.maxSteps ?? 30,
        retries: 3,
        retryDelay: "1 second",
        log: (line) => Effect.sync(() => void lines.push(line))
      },
      once: true,
      heartbeatInterval: "15 seconds",
      pollMin: "1 second",
      pollMax: "4 seconds"
    }
    return { options, lines, workdir }
  })

const plannerOf = (decide: (request: DecisionRequest) => Effect.Effect<Decision>) => Planner.layerTest(decide)

/** The agent in a child fiber, over the fake cloud and a planner answering with `decide`. */
const forkAgent = (
  options: HostAgentOptions,
  control: { readonly layer: Layer.Layer<ControlPlane> },
  decide: (request: DecisionRequest) => Effect.Effect<Decision>
) =>
  runHostAgent(options).pipe(
    Effect.scoped,
    Effect.provide([control.layer, plannerOf(decide)]),
    Effect.forkChild
  )

describe("host agent", () => {
  it.effect("polls with backoff while nothing is queued, then runs and reports the task", () =>
    Effect.gen(function*() {
      const { lines, options, workdir } = yield* agentOptions()
      const control = fakeControlPlane({ queue: [undefined, undefined, undefined, claimed(30_000)] })
      const decisions: Array<Decision> = [
        { toolName: "write_file", arguments: { path: "out.txt", content: "done" } },
        { toolName: "finish", arguments: { summary: "wrote out.txt" } }
      ]
      let n = 0
      const fiber = yield* forkAgent(options, control, () => Effect.succeed(decisions[n++]!))
      yield* TestClock.adjust("1 second")
      assert.strictEqual(control.cloud.claims, 2)
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(control.cloud.claims, 3, "waits double after each 204")
      yield* TestClock.adjust("4 seconds")
      const end = yield* Fiber.join(fiber)
      assert.strictEqual(end._tag, "Reported")
      assert.deepStrictEqual(control.cloud.results, [{
        task: claimed(30_000),
        result: { status: "succeeded", output: "wrote out.txt" }
      }])
      assert.strictEqual(fs.readFileSync(path.join(workdir, "out.txt"), "utf8"), "done")
      assert.include(lines[0]!, "task task_1 attempt 1: claimed: write a file")
      assert.strictEqual(lines.at(-1), "task task_1: succeeded after 2 steps: wrote out.txt")
    }))

  it.effect("renews the lease in the background while a step takes long", () =>
    Effect.gen(function*() {
      const { options } = yield* agentOptions()
      const control = fakeControlPlane({ queue: [claimed(3_000)], renew: () => Effect.succeed(new Date(3_000).toISOString()) })
      const fiber = yield* forkAgent(options, control, () =>
        Effect.sleep("2500 millis").pipe(Effect.as({ toolName: "finish", arguments: { summary: "slow" } })))
      yield* TestClock.adjust("3 seconds")
      const end = yield* Fiber.join(fiber)
      assert.strictEqual(end._tag, "Reported")
      assert.isAtLeast(control.cloud.renewals.length, 1, "renewed at a third of the lease")
      assert.deepStrictEqual(control.cloud.renewals[0], claimed(3_000))
    }))

  it.effect("a lost lease (409, or 403: claimed by another host) stops the task after its step; nothing is reported", () =>
    Effect.gen(function*() {
      for (const [code, status] of [["lease_lost", 409], ["forbidden", 403]] as const) {
        const { lines, options } = yield* agentOptions()
        const control = fakeControlPlane({
          queue: [claimed(3_000)],
          renew: () => Effect.fail(new ControlPlaneError({ message: "not yours", status, code }))
        })
        const fiber = yield* forkAgent(options, control, () =>
          Effect.sleep("1 second").pipe(Effect.as({ toolName: "read_file", arguments: { path: "x" } })))
        yield* TestClock.adjust("5 seconds")
        const end = yield* Fiber.join(fiber)
        assert.strictEqual(end._tag, "NotReported", code)
        assert.deepStrictEqual(control.cloud.results, [])
        assert.isTrue(lines.some((l) => l.includes("lease lost, stopped without reporting")), code)
      }
    }))

  it.effect("cancelled by the operator (409 task_cancelled on renewal): the step finishes, no further decision, nothing reported", () =>
    Effect.gen(function*() {
      const { lines, options } = yield* agentOptions()
      const control = fakeControlPlane({
        queue: [claimed(3_000)],
        renew: () => Effect.fail(new ControlPlaneError({ message: "Task task_1 was cancelled", status: 409, code: "task_cancelled" }))
      })
      let asked = 0
      const fiber = yield* forkAgent(options, control, () =>
        Effect.sync(() => asked++).pipe(
          Effect.andThen(Effect.sleep("2 seconds")),
          Effect.as({ toolName: "read_file", arguments: { path: "x" } })
        ))
      yield* TestClock.adjust("10 seconds")
      const end = yield* Fiber.join(fiber)
      assert.strictEqual(end._tag, "NotReported")
      assert.include(end._tag === "NotReported" ? end.reason : "", "cancelled")
      assert.strictEqual(asked, 1, "no decision after the cancel was known")
      assert.strictEqual(control.cloud.renewals.length, 1, "no renewal loop after a 409 task_cancelled")
      assert.deepStrictEqual(control.cloud.results, [])
      assert.isTrue(lines.some((l) => l.includes("cancelled by the operator, stopped without reporting")))
    }))

  it.effect("cancelled by the operator (409 task_cancelled on a decision): stops at once, no retry, nothing reported", () =>
    Effect.gen(function*() {
      const { lines, options } = yield* agentOptions()
      const control = fakeControlPlane({ queue: [claimed(60_000)] })
      let asked = 0
      const end = yield* runHostAgent(options).pipe(
        Effect.scoped,
        Effect.provide([
          control.layer,
          Planner.layerTest(() =>
            Effect.sync(() => asked++).pipe(Effect.andThen(Effect.fail(
              new PlannerError({ message: "Task task_1 was cancelled", status: 409, code: "task_cancelled", retryable: false })
            ))))
        ]),
        Effect.forkChild,
        Effect.flatMap(Fiber.join)
      )
      assert.strictEqual(end._tag, "NotReported")
      assert.strictEqual(asked, 1, "a cancelled task is not asked about again")
      assert.deepStrictEqual(control.cloud.results, [], "a cancel is not reported as a failure")
      assert.isFalse(lines.some((l) => l.includes("retry")))
      assert.isTrue(lines.some((l) => l.includes("cancelled by the operator")))
    }))

  it.effect("a result refused as task_cancelled is no error: the agent says so and goes on", () =>
    Effect.gen(function*() {
      const { lines, options } = yield* agentOptions()
      const control = fakeControlPlane({
        queue: [claimed(60_000)],
        report: Effect.fail(new ControlPlaneError({ message: "Task task_1 was cancelled", status: 409, code: "task_cancelled" }))
      })
      const end = yield* forkAgent(options, control, () => Effect.succeed({ toolName: "finish", arguments: { summary: "s" } })).pipe(
        Effect.flatMap(Fiber.join)
      )
      assert.strictEqual(end._tag, "NotReported")
      assert.isTrue(lines.some((l) => l.includes("cancelled by the operator before its result")))
    }))

  it.effect("a refused result (the attempt is no longer ours) is logged, and the agent goes on", () =>
    Effect.gen(function*() {
      const { lines, options } = yield* agentOptions()
      const control = fakeControlPlane({
        queue: [claimed(60_000)],
        report: Effect.fail(new ControlPlaneError({ message: "claimed by another host", status: 403, code: "forbidden" }))
      })
      const end = yield* forkAgent(options, control, () => Effect.succeed({ toolName: "finish", arguments: { summary: "s" } })).pipe(
        Effect.flatMap(Fiber.join)
      )
      assert.deepStrictEqual(end._tag === "NotReported" && end.reason, "claimed by another host")
      assert.isTrue(lines.some((l) => l.includes("result not accepted: claimed by another host")))
    }))

  it.effect("a refused token stops the agent before it claims anything", () =>
    Effect.gen(function*() {
      const { options } = yield* agentOptions()
      const control = fakeControlPlane({
        queue: [claimed(3_000)],
        heartbeat: Effect.fail(new ControlPlaneError({ message: "unknown host token (unauthenticated)", status: 401, code: "unauthenticated" }))
      })
      const error = yield* runHostAgent(options).pipe(
        Effect.scoped,
        Effect.provide([control.layer, plannerOf(() => Effect.die("never asked"))]),
        Effect.flip
      )
      assert.strictEqual(error._tag, "HostAgentFatal")
      assert.include(error.message, "heartbeat refused")
      assert.strictEqual(control.cloud.claims, 0)
    }))

  it.effect("interrupted mid-step (SIGTERM): the step finishes, then the task is reported failed, host shutting down", () =>
    Effect.gen(function*() {
      const { options, workdir } = yield* agentOptions()
      const control = fakeControlPlane({ queue: [claimed(60_000)] })
      const asked = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const fiber = yield* forkAgent(options, control, () =>
        Deferred.succeed(asked, undefined).pipe(
          Effect.andThen(Deferred.await(release)),
          Effect.as({ toolName: "write_file", arguments: { path: "half.txt", content: "step finished" } })
        ))
      yield* Deferred.await(asked)
      const interrupting = yield* Fiber.interrupt(fiber).pipe(Effect.forkChild)
      yield* Effect.yieldNow
      assert.deepStrictEqual(control.cloud.results, [], "no report while the step is under way")
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(interrupting)
      assert.strictEqual(fs.readFileSync(path.join(workdir, "half.txt"), "utf8"), "step finished", "the current step completed")
      assert.deepStrictEqual(control.cloud.results, [{
        task: claimed(60_000),
        result: { status: "failed", output: shutdownReason }
      }])
    }))

  it.effect("interrupted right after finish: the success is reported, not a shutdown failure", () =>
    Effect.gen(function*() {
      const { options } = yield* agentOptions()
      const release = yield* Deferred.make<void>()
      const asked = yield* Deferred.make<void>()
      const control = fakeControlPlane({ queue: [claimed(60_000)] })
      const fiber = yield* forkAgent(options, control, () =>
        Deferred.succeed(asked, undefined).pipe(
          Effect.andThen(Deferred.await(release)),
          Effect.as({ toolName: "finish", arguments: { summary: "all good" } })
        ))
      yield* Deferred.await(asked)
      const interrupting = yield* Fiber.interrupt(fiber).pipe(Effect.forkChild)
      yield* Effect.yieldNow
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(interrupting)
      assert.deepStrictEqual(control.cloud.results, [{
        task: claimed(60_000),
        result: { status: "succeeded", output: "all good" }
      }])
    }))
})
