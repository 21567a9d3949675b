/**
 * The real sub-agents behind the `Subagents` port: one per kind of the
 * registry (`JobKinds.ts`: research, demo and visual), each a tool loop
 * through the configured `ProviderAdapter` with its own model
 * (`modelFor(kind)`) and tools. Configuration: `SubagentConfig.ts`.
 *
 * Long-lived resources belong to the layer's scope, made by each kind's
 * definition: the HTTP agents of `fetch_url` and `web_search`, and the
 * headless browser of the demo builder (launched on the first demo, closed
 * with the layer).
 *
 * `run` never fails: whatever goes wrong ends in the kind's failure shape
 * (`subagentFailure`), with the reason. A defect in a sub-agent is caught here
 * too, so the runner always has a result to steer.
 */
import { Cause, Effect, Layer } from "effect"
import type { JobKind, SubagentResult } from "@switchboard/domain"
import { subagentFailure, traced } from "@switchboard/domain"
import { ProviderAdapter } from "@switchboard/providers"
import type { SubagentRun } from "../JobKindDefinition.ts"
import { registeredKinds } from "../JobKinds.ts"
import { Subagents } from "../Subagents.ts"
import type { SubagentJob } from "../Subagents.ts"
import { readSubagentSettings } from "./SubagentConfig.ts"
import type { SubagentOverrides, SubagentSettings } from "./SubagentConfig.ts"

export type { SubagentOverrides }

const make = (settings: SubagentSettings, overrides: SubagentOverrides = {}) =>
  Effect.gen(function*() {
    const provider = yield* ProviderAdapter
    // Each kind's sub-agent made once, in the registry's order, its resources in the layer's scope.
    const runs = new Map<JobKind, SubagentRun<any, SubagentResult>>()
    for (const kind of registeredKinds) runs.set(kind.kind, yield* kind.subagent(settings, overrides))

    const crashed = (kind: JobKind, job: SubagentJob) => (cause: Cause.Cause<never>) =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause)
        : Effect.logError(`sub-agent ${kind} of job ${job.jobId} crashed`, cause).pipe(
          Effect.as(subagentFailure(kind, job.input, "the sub-agent crashed (see the server log)"))
        )

    const runKind = (job: SubagentJob): Effect.Effect<SubagentResult, never, ProviderAdapter> => {
      const run = runs.get(job.kind)
      // Every registered kind's is made above, and only registered kinds are claimed (JobsRepo).
      return run === undefined ? Effect.die(new Error(`no sub-agent for job kind ${job.kind}`)) : run(job.input, job.reportActivity)
    }

    return Subagents.of({
      run: (job) =>
        runKind(job).pipe(
          Effect.catchCause(crashed(job.kind, job)),
          Effect.provideService(ProviderAdapter, provider),
          traced("Subagents.run", () => ({ attributes: { kind: job.kind, jobId: job.jobId } }))
        )
    })
  })

/** The sub-agents, configured from the environment (`SubagentConfig.ts`). */
export const layer: Layer.Layer<Subagents, never, ProviderAdapter> = Layer.effect(
  Subagents,
  Effect.flatMap(readSubagentSettings, make)
)

/** The sub-agents with settings given directly (tests). */
export const layerTest = (
  settings: SubagentSettings,
  overrides: SubagentOverrides = {}
): Layer.Layer<Subagents, never, ProviderAdapter> => Layer.effect(Subagents, make(settings, overrides))
