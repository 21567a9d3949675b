/**
 * One client tool call resolved to its result: validated against the tool's
 * schema, executed, and whatever goes wrong — invalid arguments, a tool that
 * fails, throws or dies — made the call's error for the model to recover
 * from. Only an interruption (the user stopping the turn) is not a result.
 */
import type { ToolCall, ToolResult } from "@switchboard/domain"
import { Cause, Effect } from "effect"
import { describeUnknown } from "../api/ApiFailure.ts"
import type { ToolRegistry } from "../tools/ToolRegistry.ts"
import { validateToolCall } from "../tools/ValidateToolCall.ts"
import type { TurnContext } from "./OrchestratorApi.ts"

/** Text and JSON crossing to the server must be NUL-free (the transcript lives in PostgreSQL). */
export const stripNul = (s: string): string => s.replaceAll("\u0000", "")

/** A tool's result as JSON the server accepts: what JSON cannot carry is dropped, NULs removed. */
const toJsonValue = (value: unknown): unknown => {
  if (value === undefined) return undefined
  try {
    const text = JSON.stringify(value, (_key, v: unknown) => typeof v === "string" ? stripNul(v) : v)
    return text === undefined ? undefined : JSON.parse(text)
  } catch {
    return stripNul(String(value))
  }
}


const describeCause = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.findErrorOption(cause)
  if (failure._tag === "Some") return describeUnknown(failure.value)
  const defect = Cause.findDefect(cause)
  return defect._tag === "Success" ? describeUnknown(defect.success) : "the tool was interrupted"
}

export const resolveCall = (registry: ToolRegistry, call: ToolCall, context: TurnContext | null): Effect.Effect<ToolResult> => {
  const validation = validateToolCall(call, registry.get(call.name))
  if (validation._tag === "Invalid") {
    return Effect.succeed({ toolCallId: call.id, name: call.name, error: stripNul(validation.error) })
  }
  // suspend: a tool that throws while *building* its effect is captured like one that dies inside it.
  // The turn's context, whichever agent's: a tool reads what it needs of it (the media editor's decodes its project).
  return Effect.suspend(() => validation.tool.execute(validation.args, { agentContext: context })).pipe(
    // A tool that returns nothing still answers the call: `result: null`, as the contract's shape has it.
    Effect.map((value): ToolResult => ({ toolCallId: call.id, name: call.name, result: toJsonValue(value) ?? null })),
    Effect.catchCause((cause) =>
      // Ctrl+C must stop the turn, not become a tool error the model is asked to recover from.
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause as Cause.Cause<never>)
        : Effect.succeed<ToolResult>({ toolCallId: call.id, name: call.name, error: stripNul(describeCause(cause)) })
    )
  )
}
