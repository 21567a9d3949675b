/**
 * What the host agent's tools share: the error a tool fails with (its message
 * is written for the planner, which reads it in the next step's prompt), the
 * names of the two tools that end a task, and the JSON Schema form in which
 * the tools are offered to the planner (docs/planner.md, "The decision": `{ name,
 * description, parameters }`).
 *
 * Host tools are ordinary `ToolDefinition`s (domain `Tools.ts`), so the CLI's
 * `ToolRegistry` and `validateToolCall` serve them unchanged; their
 * `execute` closes over the host's options (workdir, allow-list) instead of
 * reading a context. Each is declared once, by its argument schema
 * (`hostTool`).
 */
import { toolFromSchema } from "@switchboard/domain"
import type { ToolDefinition, ToolSchema } from "@switchboard/domain"
import { Data, Effect, Schema } from "effect"
import { toolInputSchema } from "@switchboard/providers"
import type { ToolRegistry } from "@switchboard/client"

export class HostToolError extends Data.TaggedError("HostToolError")<{
  readonly message: string
}> {}

/**
 * A host tool from the one declaration of its arguments (a `Struct` whose
 * fields carry descriptions): the parameters and JSON Schema the planner is
 * offered are derived from `args`, and a call's arguments are decoded with
 * it, a mismatch being the tool's error for the planner to read.
 */
export const hostTool = <A>(definition: {
  readonly name: string
  readonly description: string
  readonly args: Schema.Codec<A, unknown>
  readonly execute: (args: A) => Effect.Effect<unknown, HostToolError>
}): ToolDefinition => {
  const decode = Schema.decodeUnknownEffect(definition.args)
  return {
    ...toolFromSchema(definition.name, definition.description, definition.args),
    execute: (args) =>
      decode(args).pipe(
        Effect.mapError((e) => new HostToolError({ message: `invalid arguments: ${e.message.replace(/\s+/g, " ")}` })),
        Effect.flatMap(definition.execute)
      )
  }
}

/** The task is done: its `summary` is the result's output. */
export const finishToolName = "finish"
/** The task cannot be done: its `reason` is the result's output. */
export const failToolName = "fail"

/** One tool as the planner decision request carries it. */
export interface PlannerTool {
  readonly name: string
  readonly description: string
  readonly parameters: Record<string, unknown>
}

export const toPlannerTool = (schema: ToolSchema): PlannerTool => ({
  name: schema.name,
  description: schema.description,
  parameters: toolInputSchema(schema)
})

/** Every registered tool in registration order (stable from one step to the next). */
export const plannerTools = (registry: ToolRegistry): ReadonlyArray<PlannerTool> => registry.getAll().map(toPlannerTool)
