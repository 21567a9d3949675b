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
import { Config, Effect } from "effect"
import type { JobKind } from "@switchboard/domain"
import { LlmModelSetting } from "../../chat/ProviderSettings.ts"
import { httpUrl } from "../../process/Accepts.ts"
import type { Setting } from "../../process/Setting.ts"
import { optionalText, setting } from "../../process/Setting.ts"
import { registeredKinds } from "../JobKinds.ts"
import type { SubagentSettings } from "./SubagentSettings.ts"

export type { SubagentOverrides, SubagentSettings } from "./SubagentSettings.ts"

/** Each kind's model, under the variable its definition names (`JOB_MODEL_<KIND>`). */
export const ModelSettings = Object.fromEntries(
  registeredKinds.map((k) => [k.kind, setting({ name: k.modelVariable, blankIsUnset: true }, optionalText)])
) as Readonly<Record<JobKind, Setting<string | undefined>>>

/**
 * The model a sub-agent of this kind uses: its kind's variable, else
 * `LLM_MODEL`; undefined when neither is set (the adapter's own model is then
 * used, and an adapter without one is `NotConfigured` anyway).
 */
export const modelFor = (role: JobKind): Effect.Effect<string | undefined> =>
  Effect.gen(function*() {
    return (yield* ModelSettings[role].config) ?? (yield* LlmModelSetting.config)
  }).pipe(Effect.orElseSucceed(() => undefined))

export const DEFAULT_CHROMIUM_PATH = "/usr/bin/chromium"

export const SearchUrlSetting = setting({
  name: "SEARCH_URL",
  expected: "an http(s) URL of a SearXNG-compatible JSON search API",
  accepts: httpUrl,
  blankIsUnset: true
}, optionalText)

export const ChromiumPathSetting = setting({ name: "CHROMIUM_PATH", blankIsUnset: true }, (name) =>
  optionalText(name).pipe(Config.map((path) => path ?? DEFAULT_CHROMIUM_PATH)))

const FLAG = ["1", "0", "true", "false", "yes", "no", "on", "off"]

/** 1, true, yes, on (any case) are on; the others of `FLAG` off; unset is `byDefault`. */
const flagSetting = (name: string, byDefault: boolean) =>
  setting({
    name,
    expected: "1 or 0 (true/false, yes/no, on/off)",
    accepts: (value) => FLAG.includes(value.toLowerCase()),
    blankIsUnset: true
  }, (variable) =>
    optionalText(variable).pipe(
      Config.map((raw) => raw === undefined ? byDefault : ["1", "true", "yes", "on"].includes(raw.toLowerCase()))
    ))

export const FetchAllowPrivateSetting = flagSetting("FETCH_ALLOW_PRIVATE", false)
export const VisualVisionSetting = flagSetting("JOB_VISUAL_VISION", true)

export const readSubagentSettings: Effect.Effect<SubagentSettings> = Effect.gen(function*() {
  return {
    models: Object.fromEntries(
      yield* Effect.forEach(registeredKinds, (k) => Effect.map(modelFor(k.kind), (model) => [k.kind, model] as const))
    ) as Record<JobKind, string | undefined>,

    ...yield* Config.all({
      searchUrl: SearchUrlSetting.config,
      fetchAllowPrivate: FetchAllowPrivateSetting.config,
      chromiumPath: ChromiumPathSetting.config,
      visualVision: VisualVisionSetting.config
    }).pipe(Effect.orDie)
  }
})
