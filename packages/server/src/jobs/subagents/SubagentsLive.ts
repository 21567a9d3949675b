/**
 * The real sub-agents behind the `Subagents` port: research, demo and visual,
 * each a tool loop through the configured `ProviderAdapter` with its own model
 * (`modelFor(role)`) and tools. Configuration: `SubagentConfig.ts`.
 *
 * Long-lived resources belong to the layer's scope: the HTTP agents of
 * `fetch_url` and `web_search`, and the headless browser of the demo builder
 * (launched on the first demo, closed with the layer).
 *
 * `run` never fails: whatever goes wrong ends in the kind's failure shape
 * (`subagentFailure`), with the reason. A defect in a sub-agent is caught here
 * too, so the runner always has a result to steer.
 */
import { Cause, Effect, Layer } from "effect"
import type { DemoToolInput, JobKind, ResearchToolInput, SubagentResult, VisualToolInput } from "@switchboard/domain"
import { subagentFailure } from "@switchboard/domain"
import { ProviderAdapter } from "@switchboard/providers/ProviderAdapter"
import { Subagents } from "../Subagents.ts"
import type { SubagentJob } from "../Subagents.ts"
import { runDemo } from "./demo/Demo.ts"
import * as HeadlessBrowser from "./demo/HeadlessBrowser.ts"
import * as PageFetcher from "./research/PageFetcher.ts"
import { runResearch } from "./research/Research.ts"
import * as WebSearch from "./research/WebSearch.ts"
import { readSubagentSettings } from "./SubagentConfig.ts"
import { runVisual } from "./visual/Visual.ts"
import type { SubagentSettings } from "./SubagentConfig.ts"
import { traced } from "@switchboard/providers/Spans"

/** Knobs tests turn that no environment variable does. */
export interface SubagentOverrides {
  readonly fetch?: Omit<PageFetcher.PageFetcherOptions, "allowPrivate">
}

const make = (settings: SubagentSettings, overrides: SubagentOverrides = {}) =>
  Effect.gen(function*() {
    const provider = yield* ProviderAdapter
    const fetcher = yield* PageFetcher.make({ ...overrides.fetch, allowPrivate: settings.fetchAllowPrivate })
    const search = settings.searchUrl === undefined ? undefined : yield* WebSearch.make(settings.searchUrl)
    // Launched on the first demo, not here: a server that never builds a demo never starts a browser.
    const browser = yield* HeadlessBrowser.make(settings.chromiumPath)

    const runKind = (job: SubagentJob): Effect.Effect<SubagentResult, never, ProviderAdapter> => {
      switch (job.kind) {
        case "research":
          return runResearch(
            { search, fetcher, model: settings.models.research },
            job.input as ResearchToolInput,
            job.reportActivity
          )
        case "demo":
          return runDemo({ browser, model: settings.models.demo }, job.input as DemoToolInput, job.reportActivity)
        case "visual":
          return runVisual(
            { model: settings.models.visual, vision: settings.visualVision },
            job.input as VisualToolInput,
            job.reportActivity
          )
      }
    }

    const crashed = (kind: JobKind, job: SubagentJob) => (cause: Cause.Cause<never>) =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause)
        : Effect.logError(`sub-agent ${kind} of job ${job.jobId} crashed`, cause).pipe(
          Effect.as(subagentFailure(kind, job.input, "the sub-agent crashed (see the server log)"))
        )

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
export const SubagentsLive: Layer.Layer<Subagents, never, ProviderAdapter> = Layer.effect(
  Subagents,
  Effect.flatMap(readSubagentSettings, make)
)

/** The sub-agents with settings given directly (tests). */
export const layerWith = (
  settings: SubagentSettings,
  overrides: SubagentOverrides = {}
): Layer.Layer<Subagents, never, ProviderAdapter> => Layer.effect(Subagents, make(settings, overrides))
