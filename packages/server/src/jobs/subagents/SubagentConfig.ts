/**
 * The sub-agents' configuration (docs/configuration.md, Sub-agent jobs), read with
 * Effect Config so tests swap the ConfigProvider:
 *
 * | variable              | meaning                                                                    |
 * | --------------------- | -------------------------------------------------------------------------- |
 * | `JOB_MODEL_RESEARCH`  | the research sub-agent's model, default `LLM_MODEL`                        |
 * | `JOB_MODEL_DEMO`      | the demo builder's model, default `LLM_MODEL`                              |
 * | `JOB_MODEL_VISUAL`    | the visual maker's model, default `LLM_MODEL`                              |
 * | `SEARCH_URL`          | a SearXNG-compatible JSON search API; unset: no `web_search`               |
 * | `FETCH_ALLOW_PRIVATE` | `1`: `fetch_url` may reach private, loopback, link-local addresses         |
 * | `CHROMIUM_PATH`       | the browser the demo is tested in, default `/usr/bin/chromium`             |
 * | `JOB_VISUAL_VISION`   | `0`: never show the visual maker its render (a text-only model); default on |
 *
 * A blank value counts as unset, as for the provider's variables.
 */
import { Config, Effect, Option } from "effect"
import type { JobKind } from "@switchboard/domain"
import { jobKinds, registeredKinds } from "../JobKinds.ts"
import type { SubagentSettings } from "./SubagentSettings.ts"

export type { SubagentOverrides, SubagentSettings } from "./SubagentSettings.ts"

/** An optional variable; blank or unreadable counts as absent. */
const optional = (name: string): Effect.Effect<string | undefined> =>
  Config.option(Config.String(name)).pipe(
    Config.map(Option.map((s: string) => s.trim())),
    Config.map(Option.filter((s: string) => s !== "")),
    Effect.map(Option.getOrUndefined),
    Effect.orElseSucceed(() => undefined)
  )

/**
 * The model a sub-agent of this kind uses: its kind's variable (`JOB_MODEL_<KIND>`), else
 * `LLM_MODEL`; undefined when neither is set (the adapter's own model is then
 * used, and an adapter without one is `NotConfigured` anyway).
 */
export const modelFor = (role: JobKind): Effect.Effect<string | undefined> =>
  Effect.gen(function*() {
    return (yield* optional(jobKinds[role].modelVariable)) ?? (yield* optional("LLM_MODEL"))
  })

export const DEFAULT_CHROMIUM_PATH = "/usr/bin/chromium"


const flag = (raw: string | undefined, byDefault: boolean): boolean =>
  raw === undefined ? byDefault : ["1", "true", "yes", "on"].includes(raw.toLowerCase())

export const readSubagentSettings: Effect.Effect<SubagentSettings> = Effect.gen(function*() {
  return {
    models: Object.fromEntries(
      yield* Effect.forEach(registeredKinds, (k) => Effect.map(modelFor(k.kind), (model) => [k.kind, model] as const))
    ) as Record<JobKind, string | undefined>,
    searchUrl: yield* optional("SEARCH_URL"),
    fetchAllowPrivate: flag(yield* optional("FETCH_ALLOW_PRIVATE"), false),
    chromiumPath: (yield* optional("CHROMIUM_PATH")) ?? DEFAULT_CHROMIUM_PATH,
    visualVision: flag(yield* optional("JOB_VISUAL_VISION"), true)
  }
})
