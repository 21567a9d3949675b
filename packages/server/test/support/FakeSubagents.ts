/**
 * A `Subagents` layer for tests of the job pipeline (not of the sub-agents
 * themselves): every run is recorded, and by default waits at a gate the test
 * opens with `finish(jobId, result)` — so a test decides exactly when each job
 * completes. `instant()` makes every later run finish at once; `answerWith`
 * gives full control (activity lines, delays, never finishing).
 */
import type { SubagentResult } from "@switchboard/domain"
import { ProviderAdapter } from "@switchboard/providers"
import type { ProviderError } from "@switchboard/providers"
import { Deferred, Effect, Layer } from "effect"
import type { SubagentJob } from "../../src/jobs/Subagents.ts"
import { Subagents } from "../../src/jobs/Subagents.ts"

export const researchResult = (brief: string): SubagentResult => ({
  brief,
  sources: [{ title: "Example source", url: "https://example.org/source" }]
})

export const makeFakeSubagents = () => {
  const runs: Array<SubagentJob> = []
  const gates = new Map<string, Deferred.Deferred<SubagentResult>>()
  const gate = (jobId: string) => {
    let deferred = gates.get(jobId)
    if (deferred === undefined) {
      deferred = Deferred.makeUnsafe<SubagentResult>()
      gates.set(jobId, deferred)
    }
    return deferred
  }
  let behaviour: (job: SubagentJob) => Effect.Effect<SubagentResult> = (job) => Deferred.await(gate(job.jobId))

  const layer = Layer.succeed(Subagents, Subagents.of({
    run: (job) => Effect.suspend(() => {
      runs.push(job)
      return behaviour(job)
    })
  }))

  return {
    layer,
    runs,
    /** Completes a gated job (before or after it started). */
    finish: (jobId: string, result: SubagentResult) => Deferred.succeed(gate(jobId), result).pipe(Effect.asVoid),
    /** Every later run completes at once with `result(job)`. */
    instant: (result: (job: SubagentJob) => SubagentResult = (job) => researchResult(`brief for ${job.jobId}`)) => {
      behaviour = (job) => Effect.succeed(result(job))
    },
    /** Every later run waits for `finish` (the default). */
    gated: () => {
      behaviour = (job) => Deferred.await(gate(job.jobId))
    },
    answerWith: (f: (job: SubagentJob, gated: Effect.Effect<SubagentResult>) => Effect.Effect<SubagentResult>) => {
      behaviour = (job) => f(job, Deferred.await(gate(job.jobId)))
    },
    /** Waits (polling, real time) until `n` runs started. */
    waitForRuns: (n: number) =>
      Effect.gen(function*() {
        while (runs.length < n) yield* Effect.sleep("10 millis")
        return runs.slice(0, n)
      })
  }
}

/**
 * A research sub-agent that asks the provider once, with its own model (`research-model`), and
 * reports what it said; a provider failure is a defect unless `onFailure` makes it a brief.
 * `before` runs first: a test that must order the job's call after something else waits there.
 */
export const oneCallResearcher = (
  onFailure?: (error: ProviderError) => Effect.Effect<string>,
  before: Effect.Effect<void> = Effect.void
) =>
  Layer.effect(Subagents, Effect.gen(function*() {
    const provider = yield* ProviderAdapter
    return Subagents.of({
      run: (job) =>
        Effect.andThen(before, provider.chat({
          messages: [{ id: "q", role: "user", content: `research ${JSON.stringify(job.input)}`, timestamp: 1 }],
          systemPrompt: "You research.",
          toolSchemas: [],
          model: "research-model"
        })).pipe(
          Effect.map((answer) => answer.content),
          onFailure === undefined ? Effect.orDie : Effect.catchTag("ProviderError", onFailure),
          Effect.map(researchResult)
        )
    })
  }))
