/** What the domain knows of one job kind, built in (`Jobs.ts`) or defined (`SubagentKinds.ts`). */
import type { Schema } from "effect"
import type { ToolSchema } from "./ToolSchema.ts"

/** Its tool, its schemas, its failure shape and its steer's words. */
export interface JobKindSpec<K extends string, I, R> {
  readonly kind: K
  /** The job tool as the model sees it: its name is the kind. */
  readonly tool: ToolSchema
  /** The tool call's arguments. */
  readonly input: Schema.Decoder<I>
  readonly result: Schema.Decoder<R>
  /** Whether a result is the kind's failure shape. */
  readonly isFailure: (result: R) => boolean
  /** The failure shape, with the reason where the kind has room for one. */
  readonly failure: (input: I, reason: string) => R
  /** The failure shape's reason, as the kind words it (`undefined` for a success). */
  readonly failureReason: (result: R) => string | undefined
  /** The model-facing text of the steer: what the result IS, what to do with it (the spec's wording). */
  readonly steerText: (result: R) => string
}

