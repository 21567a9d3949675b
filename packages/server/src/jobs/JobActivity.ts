/**
 * A job's activity line at its two ends. Between them each sub-agent tool
 * call reports its own (`web_search: "sigma.js v3"`, see ToolLoop.ts); these
 * make sure the line is never empty, whatever the sub-agent did — one that
 * answered without calling a tool included:
 *
 * - from its creation, and again at the start of each run, what the job is
 *   to do: `researching: "…"`, `building demo: "…"`, `drawing: "…"`;
 * - once the result is stored (by the statement that stores it), what it
 *   did: `done: 3 sources`, `done: demo "…"`, `done: figure`, or
 *   `error: <reason>` for the failure shape.
 *
 * Each kind words its own (its definition in the registry, `JobKinds.ts`).
 */
import type { KindName, SubagentResult } from "@switchboard/domain"
import { kindOf } from "./JobKinds.ts"
import { activityLine } from "./subagents/ToolLoop.ts"

/** What the job is to do, from its input (which may be invalid: the line is then the kind's verb alone). */
export const startActivity = (kind: KindName, input: unknown): string => kindOf(kind).startActivity(input)

/** What the job did, from its result. */
export const finalActivity = (kind: KindName, result: SubagentResult): string => {
  const definition = kindOf(kind)
  const reason = definition.failureReason(result)
  return reason !== undefined ? activityLine(`error: ${reason}`) : definition.doneActivity(result)
}
