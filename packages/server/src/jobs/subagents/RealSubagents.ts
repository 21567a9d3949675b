/**
 * The real sub-agents behind the `Subagents` port: one per kind of the
 * registry (`JobKinds.ts`: research, demo and visual), each a tool loop
 * through the configured `ProviderAdapter` with its own model
 * (`modelFor(kind)`) and tools, and the defined kinds' engine
 * (`defined/DefinedSubagent.ts`) for a job that carries its kind's
 * definition. Configuration: `SubagentConfig.ts`.
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
import type { SubagentResult } from "@switchboard/domain"
import { subagentFailure, traced } from "@switchboard/domain"
import { ProviderAdapter } from "@switchboard/providers"
import type { SubagentRun } from "../JobKindDefinition.ts"
import { registeredKinds } from "../JobKinds.ts"
import { Subagents } from "../Subagents.ts"
import type { SubagentJob } from "../Subagents.ts"
import { readSubagentSettings } from "./SubagentConfig.ts"
import { LlmModelSetting } from "../../chat/ProviderSettings.ts"
import { runDefined } from "./defined/DefinedSubagent.ts"
import * as HeadlessBrowser from "./demo/HeadlessBrowser.ts"
import * as PageFetcher from "./research/PageFetcher.ts"
import * as WebSearch from "./research/WebSearch.ts"
import * as McpTools from "../../mcp/McpTools.ts"
import type { ServerToolsShape } from "../../chat/ServerTools.ts"
import { noServerTools } from "../../chat/ServerTools.ts"
import type { JsonObject } from "@switchboard/domain"
import type { SubagentOverrides, SubagentSettings } from "./SubagentConfig.ts"

export type { SubagentOverrides }

// Without the MCP feature (tests that bring only a provider), a defined kind's MCP servers offer nothing.
const make = (settings: SubagentSettings, overrides: SubagentOverrides = {}, mcp: ServerToolsShape = noServerTools) =>
  Effect.gen(function*() {
    const provider = yield* ProviderAdapter
    // Each kind's sub-agent made once, in the registry's order, its resources in the layer's scope.
    const runs = new Map<string, SubagentRun<any, SubagentResult>>()
    for (const kind of registeredKinds) runs.set(kind.kind, yield* kind.subagent(settings, overrides))
    // The defined kinds' tools: their own fetcher, search and (launched on first use) browser.
    const definedDeps = {
      fetcher: yield* PageFetcher.make({ ...overrides.fetch, allowPrivate: settings.fetchAllowPrivate }),
      search: settings.searchUrl === undefined ? undefined : yield* WebSearch.make(settings.searchUrl),
      browser: yield* HeadlessBrowser.make(settings.chromiumPath),
      mcp,
      defaultModel: settings.defaultModel
    }

    const crashed = (kind: string, job: SubagentJob) => (cause: Cause.Cause<never>) =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause)
        : Effect.logError(`sub-agent ${kind} of job ${job.jobId} crashed`, cause).pipe(
          Effect.as(subagentFailure(kind, job.input, "the sub-agent crashed (see the server log)"))
        )

    const runKind = (job: SubagentJob): Effect.Effect<SubagentResult, never, ProviderAdapter> => {
      if (job.definition !== undefined && job.chatId !== undefined) {
        const input = job.input as JsonObject
        const defined = { jobId: job.jobId, chatId: job.chatId, definition: job.definition, input }
        return runDefined(definedDeps, job.approvals === undefined ? defined : { ...defined, approvals: job.approvals }, job.reportActivity)
      }
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

/** The sub-agents, configured from the environment (`SubagentConfig.ts`), defined kinds' MCP servers included. */
export const layer = Layer.effect(
  Subagents,
  Effect.gen(function*() {
    const settings = yield* readSubagentSettings
    // A defined kind without a `model` of its own uses LLM_MODEL (the built-in kinds have their variables).
    const defaultModel = yield* LlmModelSetting.config.pipe(Effect.orElseSucceed(() => undefined))
    return yield* make({ ...settings, defaultModel }, {}, yield* McpTools.make)
  })
)

/** The sub-agents with settings given directly and the MCP feature (tests of defined kinds' MCP servers). */
export const layerWithMcp = (settings: SubagentSettings, overrides: SubagentOverrides = {}) =>
  Layer.effect(Subagents, Effect.flatMap(McpTools.make, (mcp) => make(settings, overrides, mcp)))

/** The sub-agents with settings given directly (tests). */
export const layerTest = (
  settings: SubagentSettings,
  overrides: SubagentOverrides = {}
): Layer.Layer<Subagents, never, ProviderAdapter> => Layer.effect(Subagents, make(settings, overrides))
