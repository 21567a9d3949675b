/**
 * The one step loop every tool loop runs (docs/architecture.md): ask the
 * model, run the calls whose tools this loop owns, feed the results back, and
 * go on until a stop condition holds — in the style of the AI SDK's
 * `stopWhen`. A server turn, a sub-agent, the client's orchestrator and the
 * host agent differ only in what they ask, which tools they own, how a call
 * runs and where its result goes, and their stop conditions; the loop itself
 * is written once.
 *
 * A step ends the loop when its answer calls no owned tool (`"answered"`: a
 * final answer, or calls left to someone else — a client's tools), or when a
 * stop condition holds: `stopBefore` on the answer, its calls not run (a cap
 * that must not leave calls unanswered, a stopped stream); `stopWhen` once
 * they ran (a cap, a result submitted, calls left pending). Every loop names
 * a cap among its conditions (`stepCountIs`): nothing here bounds it.
 */
import { Effect } from "effect"
import type { ToolCall } from "./Chat.ts"

/** What the loop reads of a step's answer: the calls it made. */
export interface StepAnswer {
  readonly toolCalls?: ReadonlyArray<ToolCall> | undefined
}

/** One step as the stop conditions see it. */
export interface StepState<A, O = undefined> {
  /** From 1. */
  readonly step: number
  readonly answer: A
  /** The answer's calls this loop runs. */
  readonly owned: ReadonlyArray<ToolCall>
  /** The answer's calls left to someone else (the client's tools): never run here. */
  readonly others: ReadonlyArray<ToolCall>
  /** What running the owned calls gave (`stopWhen` only). */
  readonly ran: O
}

/** A stop condition and the reason the loop's end then gives. */
export interface Stop<A, O, Reason extends string> {
  readonly reason: Reason
  readonly when: (state: StepState<A, O>) => boolean
}

/** The loop's end: why, and the last step (what its calls gave, when a `stopWhen` condition ended it). */
export type StepEnd<A, O, Before extends string, After extends string> =
  | ({ readonly reason: "answered" } & StepState<A, undefined>)
  | ({ readonly reason: Before } & StepState<A, undefined>)
  | ({ readonly reason: After } & StepState<A, O>)

export interface StepLoop<A extends StepAnswer, O, Before extends string, After extends string, Err, R> {
  /** The model asked, with the conversation as the loop has fed it so far. */
  readonly ask: (step: number) => Effect.Effect<A, Err, R>
  /** Whether a call is this loop's to run. */
  readonly owns: (call: ToolCall) => boolean
  /** Runs the step's owned calls and feeds their results back (into the conversation, the store). */
  readonly run: (state: StepState<A>) => Effect.Effect<O, Err, R>
  /** Checked on the answer, in order, before its calls run. */
  readonly stopBefore?: ReadonlyArray<Stop<A, undefined, Before>>
  /** Checked, in order, once the step's calls ran. */
  readonly stopWhen: ReadonlyArray<Stop<A, O, After>>
  /**
   * A step — its answer and its calls' run — is one, whatever interrupts the loop meanwhile (a host
   * agent's decision, which the cloud has logged, is always carried out): it runs uninterruptibly,
   * and an `ask` marks what may be cut short with `Effect.interruptible` (a wait between retries).
   * An interruption then lands there, or between steps.
   */
  readonly atomic?: boolean
}

export const runSteps = <A extends StepAnswer, O, Err, R, After extends string, Before extends string = never>(
  loop: StepLoop<A, O, Before, After, Err, R>
): Effect.Effect<StepEnd<A, O, Before, After>, Err, R> => {
  /** The rest of a step once its answer arrived: its end, or `undefined` to go on. */
  const answered = (step: number, answer: A): Effect.Effect<StepEnd<A, O, Before, After> | undefined, Err, R> => {
    const calls = answer.toolCalls ?? []
    const owned = calls.filter(loop.owns)
    const before: StepState<A> = { step, answer, owned, others: calls.filter((call) => !owned.includes(call)), ran: undefined }
    const early = loop.stopBefore?.find((stop) => stop.when(before))
    if (early !== undefined) return Effect.succeed({ ...before, reason: early.reason })
    if (owned.length === 0) return Effect.succeed({ ...before, reason: "answered" as const })
    return Effect.map(loop.run(before), (ran) => {
      const after: StepState<A, O> = { ...before, ran }
      const stop = loop.stopWhen.find((s) => s.when(after))
      return stop === undefined ? undefined : { ...after, reason: stop.reason }
    })
  }
  const oneStep = (step: number) => {
    const whole = Effect.flatMap(loop.ask(step), (answer) => answered(step, answer))
    return loop.atomic === true ? Effect.uninterruptible(whole) : whole
  }
  return Effect.gen(function*() {
    for (let step = 1;; step++) {
      const end = yield* oneStep(step)
      if (end !== undefined) return end
    }
  })
}

/** At `count` steps (after the step's calls ran, in `stopWhen`; before, in `stopBefore`). */
export const stepCountIs = <Reason extends string>(count: number, reason: Reason): Stop<any, any, Reason> => ({
  reason,
  when: (state) => state.step >= count
})

/** A step that called a tool of this name (a result submitted, the work finished). */
export const hasToolCall = <Reason extends string>(name: string, reason: Reason): Stop<any, any, Reason> => ({
  reason,
  when: (state) => state.owned.some((call) => call.name === name)
})

/** A step whose answer also called tools that are not this loop's: they wait for their owner. */
export const othersPending = <Reason extends string>(reason: Reason): Stop<any, any, Reason> => ({
  reason,
  when: (state) => state.others.length > 0
})
