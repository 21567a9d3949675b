/**
 * The host agent (`switchboard host run`): heartbeats, claims tasks, and runs
 * each through the planner loop while renewing its lease, then reports the
 * result.
 *
 * - Heartbeat: once at start (a refused token stops the agent at once, with
 *   the server's sentence), then every `heartbeatInterval` in a background
 *   fiber; each answer also gives the server's clock, against which lease
 *   expiry times are read (the host's clock may be off).
 * - Claim: on 204 the agent waits, doubling from `pollMin` to `pollMax`; a
 *   claim resets the wait. Network failures back off the same way.
 * - Lease: renewed in a fiber racing the loop, at a third of the time left; a
 *   409 `lease_lost` (or a 403: the task went to another host) stops the loop
 *   after its current step and nothing is reported: the cloud has given the
 *   task to another attempt. A 409 `task_cancelled` (the operator cancelled
 *   the task) stops it the same way, said as such. A refused result is
 *   logged, not fatal.
 * - Shutdown (SIGINT/SIGTERM interrupt the main fiber): claiming stops, the
 *   step under way finishes (see `PlannerLoop.ts`), and the task is reported
 *   failed with "host shutting down" — or with what the loop had already
 *   settled on — instead of leaving its lease to expire.
 */
import { Clock, Data, Duration, Effect, Ref, Schedule } from "effect"
import { ControlPlane, isFatal, isTaskCancelled, isTaskLost } from "./ControlPlane.ts"
import type { ClaimedTask, ControlPlaneError, ReportedResult, TaskAttempt } from "./ControlPlane.ts"
import { runPlannerLoop } from "./PlannerLoop.ts"
import type { LoopEnd, LoopOptions, TaskResult } from "./PlannerLoop.ts"

export const shutdownReason = "host shutting down"

export interface HostAgentOptions {
  readonly loop: LoopOptions
  /** Stop after one task (claimed, run and reported). */
  readonly once: boolean
  readonly heartbeatInterval: Duration.Input
  readonly pollMin: Duration.Input
  readonly pollMax: Duration.Input
}

/** The agent cannot go on: bad token, wrong host id. */
export class HostAgentFatal extends Data.TaggedError("HostAgentFatal")<{
  readonly message: string
}> {}

/** What one claimed task came to. */
export type TaskEnd =
  | { readonly _tag: "Reported"; readonly task: ClaimedTask; readonly result: TaskResult }
  | { readonly _tag: "NotReported"; readonly task: ClaimedTask; readonly reason: string }

class RenewalLost extends Data.TaggedError("RenewalLost")<{
  readonly message: string
  readonly code: string | undefined
}> {}

const fatal = (what: string, error: ControlPlaneError) =>
  new HostAgentFatal({ message: `${what} refused: ${error.message}` })

export const runHostAgent = Effect.fn("HostAgent.run")(function*(options: HostAgentOptions) {
  const controlPlane = yield* ControlPlane
  const log = options.loop.log
  /** server time − local time, in ms, from the last heartbeat. */
  const clockOffset = yield* Ref.make(0)

  const heartbeat = Effect.gen(function*() {
    const serverTime = yield* controlPlane.heartbeat
    const now = yield* Clock.currentTimeMillis
    const parsed = Date.parse(serverTime)
    if (Number.isFinite(parsed)) yield* Ref.set(clockOffset, parsed - now)
  })

  yield* heartbeat.pipe(
    Effect.catch((error) => isFatal(error) ? Effect.fail(fatal("heartbeat", error)) : log(`heartbeat failed: ${error.message}`))
  )
  yield* Effect.sleep(options.heartbeatInterval).pipe(
    Effect.andThen(heartbeat.pipe(Effect.catch((error) => log(`heartbeat failed: ${error.message}`)))),
    Effect.forever,
    Effect.forkScoped
  )

  /** Renews until the lease is lost (a failure); never succeeds. */
  const renewLoop = (task: ClaimedTask) =>
    Effect.gen(function*() {
      let expiresAt = Date.parse(task.leaseExpiresAt)
      for (;;) {
        const serverNow = (yield* Clock.currentTimeMillis) + (yield* Ref.get(clockOffset))
        const left = Number.isFinite(expiresAt) ? expiresAt - serverNow : 3_000
        yield* Effect.sleep(Duration.millis(Math.max(250, Math.floor(left / 3))))
        const renewed = yield* Effect.result(controlPlane.renewLease(task))
        if (renewed._tag === "Success") {
          expiresAt = Date.parse(renewed.success)
        } else if (isTaskLost(renewed.failure)) {
          return yield* new RenewalLost({ message: renewed.failure.message, code: renewed.failure.code })
        } else {
          yield* log(`task ${task.taskId}: lease renewal failed: ${renewed.failure.message} (retrying)`)
        }
      }
    })

  const report = (task: TaskAttempt, result: ReportedResult) =>
    controlPlane.reportResult(task, result).pipe(
      // A network blip must not lose a finished task's result: a few quick retries, then say so.
      Effect.retry({
        times: 3,
        schedule: Schedule.exponential("200 millis"),
        while: (e: ControlPlaneError) => e.status === undefined
      }),
      Effect.uninterruptible
    )

  const runTask = (task: ClaimedTask) =>
    Effect.gen(function*() {
      yield* log(`task ${task.taskId} attempt ${task.attempt}: claimed: ${task.goal}`)
      const settled = yield* Ref.make<TaskResult | undefined>(undefined)
      const end: LoopEnd = yield* Effect.raceFirst(runPlannerLoop(task, options.loop, settled), renewLoop(task)).pipe(
        Effect.catchTag("RenewalLost", (e) => Effect.succeed<LoopEnd>({ _tag: "LeaseLost", message: e.message, code: e.code })),
        Effect.onInterrupt(() =>
          Effect.gen(function*() {
            const result = (yield* Ref.get(settled)) ?? { status: "failed" as const, output: shutdownReason, steps: 0 }
            yield* log(`task ${task.taskId}: interrupted; reporting ${result.status}: ${result.output}`)
            yield* report(task, { status: result.status, output: result.output }).pipe(
              Effect.catch((error) => log(`task ${task.taskId}: result not accepted: ${error.message}`))
            )
          })
        )
      )
      if (end._tag === "LeaseLost" && isTaskCancelled(end)) {
        yield* log(`task ${task.taskId} attempt ${task.attempt}: cancelled by the operator, stopped without reporting`)
        return { _tag: "NotReported", task, reason: `cancelled: ${end.message}` } satisfies TaskEnd
      }
      if (end._tag === "LeaseLost") {
        yield* log(`task ${task.taskId} attempt ${task.attempt}: lease lost, stopped without reporting (${end.message})`)
        return { _tag: "NotReported", task, reason: `lease lost: ${end.message}` } satisfies TaskEnd
      }
      const { result } = end
      const reported = yield* Effect.result(report(task, { status: result.status, output: result.output }))
      if (reported._tag === "Failure") {
        if (reported.failure.code === "unauthenticated") return yield* fatal("result", reported.failure)
        if (isTaskCancelled(reported.failure)) {
          yield* log(`task ${task.taskId} attempt ${task.attempt}: cancelled by the operator before its result; not reported`)
          return { _tag: "NotReported", task, reason: `cancelled: ${reported.failure.message}` } satisfies TaskEnd
        }
        yield* log(`task ${task.taskId}: result not accepted: ${reported.failure.message}`)
        return { _tag: "NotReported", task, reason: reported.failure.message } satisfies TaskEnd
      }
      yield* log(`task ${task.taskId}: ${result.status} after ${result.steps} step${result.steps === 1 ? "" : "s"}: ${result.output}`)
      return { _tag: "Reported", task, result } satisfies TaskEnd
    })

  const pollMin = Duration.fromInputUnsafe(options.pollMin)
  const pollMax = Duration.fromInputUnsafe(options.pollMax)
  let wait = pollMin
  const backOff = Effect.suspend(() => {
    const current = wait
    wait = Duration.min(Duration.times(wait, 2), pollMax)
    return Effect.sleep(current)
  })

  for (;;) {
    const claimed = yield* Effect.result(controlPlane.claim)
    if (claimed._tag === "Failure") {
      if (isFatal(claimed.failure)) return yield* fatal("claim", claimed.failure)
      yield* log(`claim failed: ${claimed.failure.message}`)
      yield* backOff
      continue
    }
    if (claimed.success === undefined) {
      yield* backOff
      continue
    }
    wait = pollMin
    const end = yield* runTask(claimed.success)
    if (options.once) return end
  }
})
