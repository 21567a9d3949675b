/**
 * The V8 settings the server runs with, from the environment, applied by
 * `main.ts` before anything else is loaded (each measured with `npm run bench`;
 * README, Performance):
 *
 * - Allocation-site pretenuring off (`PRETENURING=on` keeps it). Under load a
 *   request's objects outlive a scavenge or two, so V8 learns to allocate
 *   them straight into the old generation, where they die and pile up until
 *   the next full collection: the chat route's peak RSS went from ~450 MB to
 *   ~310 MB without it, at the same CPU per request.
 * - The old generation's growth after a full collection capped at
 *   `HEAP_GROWING_PERCENT` (default 20 %; `0` leaves V8's own factor, which
 *   lets it grow to 1.1–4 × what survived). The server's live heap is small
 *   (~50 MB) and what it allocates per request dies young: under 32
 *   concurrent persisted turns on PostgreSQL the peak RSS fell from ~210–220 MB
 *   to ~165–180 MB, CPU per request within the noise of the runs.
 */
import { ruleRefusal } from "../process/SettingRule.ts"
import { HeapGrowingPercentRule, PretenuringRule } from "./RuntimeSettings.ts"

export type V8Tuning =
  | { readonly _tag: "Flags"; readonly flags: ReadonlyArray<string> }
  | { readonly _tag: "Invalid"; readonly message: string }

export const DEFAULT_HEAP_GROWING_PERCENT = 20

export const v8TuningFor = (env: Readonly<Record<string, string | undefined>>): V8Tuning => {
  const refused = ruleRefusal(PretenuringRule, env) ?? ruleRefusal(HeapGrowingPercentRule, env)
  if (refused !== undefined) return { _tag: "Invalid", message: refused }
  const flags: Array<string> = []
  if ((env[PretenuringRule.name] ?? "off") === "off") flags.push("--no-allocation-site-pretenuring")
  const growing = env[HeapGrowingPercentRule.name] ?? String(DEFAULT_HEAP_GROWING_PERCENT)
  if (Number(growing) > 0) flags.push(`--heap-growing-percent=${Number(growing)}`)
  return { _tag: "Flags", flags }
}
