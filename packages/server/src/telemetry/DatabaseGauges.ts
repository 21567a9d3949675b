/**
 * Figures a feature reads from the database at each scrape of `/metrics` (`MetricsHttp.ts`),
 * beside the jobs': the feature owns its statement (and its tables), the scrape only asks. Every
 * replica reports the same numbers (use `max` across replicas). A statement that fails or takes
 * too long leaves its gauge out of that scrape.
 */
import type { Effect } from "effect"
import { Context } from "effect"

export interface DatabaseGauge {
  readonly name: string
  readonly description: string
  readonly read: Effect.Effect<number>
}

export const DatabaseGauges = Context.Reference<ReadonlyArray<DatabaseGauge>>("switchboard/server/telemetry/DatabaseGauges", {
  defaultValue: () => []
})
