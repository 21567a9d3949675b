/**
 * The planner loop: carries out one claimed task, one decision per step.
 *
 *   screenshot (when configured) → user prompt (goal + every outcome so far)
 *   → `Planner.decide` → validate the arguments against the chosen tool
 *   → execute it locally → its outcome feeds the next step
 *
 * until the planner chooses `finish` (succeeded, output = summary) or `fail`
 * (failed, output = reason), or `maxSteps` decisions were made (failed).
 *
 * A decision naming an unknown tool or carrying bad arguments is a step whose
 * outcome is that error, so the planner can correct itself; a tool that fails
 * is the same. A *planner* failure is different: there is no decision, so
 * nothing is executed — the step is asked again, with exponential backoff, at
 * most `retries` more times (only for retryable failures), and then the task
 * is failed with the planner's error. The loop never invents an action.
 *
 * One decision and the execution of its tool are uninterruptible together (a
 * step of the one step loop, `runSteps`, run `atomic`): a shutdown lands
 * between steps (or during a retry's wait), never between a decision and its
 * action, so the step under way is finished. What the loop
 * settled on is also written to `settled` the moment it is known, so a
 * shutdown right after a `finish` still reports success.
 */
import type { ToolDefinition } from "@switchboard/domain"
import { runSteps, stepCountIs } from "@switchboard/domain"
import { Cause, Duration, Effect, Option, Ref } from "effect"
import { describeUnknown, validateToolCall } from "@switchboard/client"
import type { ToolRegistry } from "@switchboard/client"
import { isTaskLost } from "./ControlPlane.ts"
import { failToolName, finishToolName, plannerTools } from "./HostTool.ts"
import { Planner } from "./Planner.ts"
import type { Decision, DecisionRequest, PlannerError } from "./Planner.ts"
import { clip, describeOutcome, systemPrompt, userPrompt } from "./PlannerPrompt.ts"
import type { StepOutcome, StepRecord } from "./PlannerPrompt.ts"
import { takeScreenshot } from "./Screenshot.ts"
import type { Screenshot } from "./Screenshot.ts"

export const defaultMaxSteps = 30
export const defaultPlannerRetries = 3
export const defaultRetryDelay: Duration.Input = "1 second"

export interface TaskToRun {
  readonly taskId: string
  readonly attempt: number
  readonly goal: string
}

export interface LoopOptions {
  readonly registry: ToolRegistry
  /** The directory the screenshot command runs in (the workdir). */
  readonly workdir: string
  readonly maxSteps: number
  /** Further attempts after a retryable planner failure. */
  readonly retries: number
  /** The first retry's wait; each next one doubles it. */
  readonly retryDelay: Duration.Input
  readonly screenshotCommand?: string | undefined
  /** One line per step (and per planner failure), for the operator. */
  readonly log: (line: string) => Effect.Effect<void>
}

/** What the task comes to, to be reported as its result. */
export interface TaskResult {
  readonly status: "succeeded" | "failed"
  readonly output: string
  /** Decisions executed. */
  readonly steps: number
}

/**
 * The cloud refused the decision because this attempt's lease is gone (or the operator cancelled
 * the task: `code` "task_cancelled"): nothing may be reported.
 */
export interface LeaseLostDuringPlanning {
  readonly _tag: "LeaseLost"
  readonly message: string
  readonly code?: string | undefined
}

export type LoopEnd =
  | { readonly _tag: "Result"; readonly result: TaskResult }
  | LeaseLostDuringPlanning


const outcomeLine = (task: TaskToRun, step: number, toolName: string, outcome: StepOutcome) =>
  `task ${task.taskId} step ${step}: ${toolName} → ${clip(describeOutcome(outcome), 200).replaceAll("\n", " ")}`

/** Validate and execute one decision; every failure of the tool becomes an error outcome. */
const execute = (registry: ToolRegistry, decision: Decision): Effect.Effect<StepOutcome> => {
  const validation = validateToolCall(
    { id: "decision", name: decision.toolName, args: decision.arguments },
    registry.get(decision.toolName)
  )
  if (validation._tag === "Invalid") return Effect.succeed({ ok: false, error: `invalid decision: ${validation.error}` })
  const tool: ToolDefinition = validation.tool
  return tool.execute(validation.args, { agentContext: null }).pipe(
    Effect.map((result): StepOutcome => ({ ok: true, result })),
    Effect.catchCause((cause) =>
      Effect.succeed<StepOutcome>({
        ok: false,
        error: Cause.hasInterruptsOnly(cause)
          ? "interrupted"
          : describeUnknown(Option.getOrElse(Cause.findErrorOption(cause), () => Cause.squash(cause)))
      })
    )
  )
}

/** What a `finish` / `fail` decision that went through settles the task on; `undefined` for any other step. */
const terminalResult = (decision: Decision, outcome: StepOutcome, steps: number): TaskResult | undefined => {
  if (!outcome.ok) return undefined
  if (decision.toolName === finishToolName) return { status: "succeeded", output: String(decision.arguments["summary"]), steps }
  if (decision.toolName === failToolName) return { status: "failed", output: String(decision.arguments["reason"]), steps }
  return undefined
}

export const runPlannerLoop = Effect.fn("PlannerLoop.run")(function*(
  task: TaskToRun,
  options: LoopOptions,
  settled: Ref.Ref<TaskResult | undefined>
) {
  const planner = yield* Planner
  const tools = plannerTools(options.registry)
  const history: Array<StepRecord> = []

  const settle = (result: TaskResult) => Ref.set(settled, result).pipe(Effect.as<LoopEnd>({ _tag: "Result", result }))

  // The index of the step being decided, numbered as the cloud's decision log numbers it (`stepIndex`,
  // from 0 within the attempt: docs/planner.md), so a line here and a row there name the same step.
  // It follows the index each decision comes back with: a decision the cloud recorded but whose
  // answer was lost (then asked again) took an index, and the log shows the gap.
  let step = 0

  /**
   * One decision, asked again after a retryable planner failure: a decision, as a call of its
   * tool, or the loop's end when the planner gave none. The step runs uninterruptibly (`atomic`):
   * only the screenshot and the wait before a retry may be cut short.
   */
  const decide = Effect.gen(function*() {
    let screenshot: Screenshot | undefined
    let screenshotNote: string | undefined
    if (options.screenshotCommand !== undefined) {
      const shot = yield* Effect.result(Effect.interruptible(takeScreenshot(options.screenshotCommand, options.workdir)))
      if (shot._tag === "Success") screenshot = shot.success
      else {
        screenshotNote = shot.failure.message
        yield* options.log(`task ${task.taskId} step ${step}: screenshot failed: ${shot.failure.message}`)
      }
    }
    const request: DecisionRequest = {
      taskId: task.taskId,
      attempt: task.attempt,
      systemPrompt,
      userPrompt: userPrompt({
        goal: task.goal,
        history,
        step,
        maxSteps: options.maxSteps,
        ...(screenshotNote === undefined ? {} : { screenshotNote })
      }),
      tools,
      ...(screenshot === undefined ? {} : { screenshot })
    }
    for (let attempt = 0;; attempt++) {
      const tried = yield* Effect.result(planner.decide(request))
      if (tried._tag === "Success") {
        const decision = tried.success
        return { decision, toolCalls: [{ id: String(decision.stepIndex ?? step), name: decision.toolName, args: decision.arguments }] }
      }
      const error: PlannerError = tried.failure
      const code = error.code === undefined ? "" : ` (${error.code})`
      if (isTaskLost(error)) {
        yield* options.log(`task ${task.taskId} step ${step}: planner refused: this attempt is no longer ours${code}`)
        return { end: { _tag: "LeaseLost", message: error.message, code: error.code } satisfies LoopEnd }
      }
      if (!error.retryable || attempt >= options.retries) {
        yield* options.log(`task ${task.taskId} step ${step}: planner failed${code}: ${error.message}; giving up`)
        const tries = attempt + 1
        return {
          end: yield* settle({
            status: "failed",
            output: `planner failed at step ${step} after ${tries} ${tries === 1 ? "try" : "tries"}${code}: ${error.message}`,
            steps: history.length
          })
        }
      }
      const backoff = Duration.times(Duration.fromInputUnsafe(options.retryDelay), 2 ** attempt)
      // A server that said when to come back (429 rate_limited, 503 overloaded) is not asked sooner.
      const wait = error.retryAfterMs === undefined ? backoff : Duration.max(backoff, Duration.millis(error.retryAfterMs))
      yield* options.log(
        `task ${task.taskId} step ${step}: planner failed${code}: ${error.message}; retry ${attempt + 1}/${options.retries} in ${Duration.format(wait)}`
      )
      yield* Effect.interruptible(Effect.sleep(wait))
    }
  })

  /** The decision's action, its record and line and, for finish/fail, the settled result. */
  const act = (decision: Decision) =>
    Effect.gen(function*() {
      const outcome = yield* execute(options.registry, decision)
      const index = decision.stepIndex ?? step
      step = index + 1
      history.push({ step: index, toolName: decision.toolName, arguments: decision.arguments, outcome })
      yield* options.log(outcomeLine(task, index, decision.toolName, outcome))
      const result = terminalResult(decision, outcome, history.length)
      if (result !== undefined) yield* Ref.set(settled, result)
      return result
    })

  const limit = Effect.suspend(() =>
    settle({
      status: "failed",
      output: `step limit reached: ${options.maxSteps} steps without finish or fail`,
      steps: history.length
    })
  )
  if (options.maxSteps <= 0) return yield* limit
  // A decision and its action are one (`atomic`): a shutdown lands between steps or during a
  // retry's wait, never between them. Every decision is a call of a tool the host runs.
  const end = yield* runSteps({
    ask: () => decide,
    owns: () => true,
    run: ({ answer }) => "decision" in answer ? act(answer.decision) : Effect.succeed(undefined),
    stopWhen: [
      { reason: "settled", when: ({ ran }) => ran !== undefined },
      stepCountIs(options.maxSteps, "limit")
    ],
    atomic: true
  })
  switch (end.reason) {
    case "answered":
      // No decision: the planner gave none (the lease lost, or it failed past its retries).
      return "end" in end.answer ? end.answer.end : yield* limit
    case "settled":
      return { _tag: "Result", result: end.ran! } satisfies LoopEnd
    case "limit":
      return yield* limit
  }
})
