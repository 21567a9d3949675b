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
 */
import type { DemoResult, JobKind, ResearchResult, SubagentResult } from "@switchboard/domain"
import { isSubagentFailure } from "@switchboard/domain"
import { activityLine } from "./subagents/ToolLoop.ts"

const field = (input: unknown, key: string): string | undefined => {
  const value = typeof input === "object" && input !== null ? (input as Record<string, unknown>)[key] : undefined
  return typeof value === "string" && value.trim() !== "" ? value : undefined
}

const quoted = (text: string | undefined) => text === undefined ? "" : ` ${JSON.stringify(text.replace(/\s+/g, " ").trim())}`

/** What the job is to do, from its input (which may be invalid: the line is then the kind's verb alone). */
export const startActivity = (kind: JobKind, input: unknown): string => {
  switch (kind) {
    case "research":
      return activityLine(`researching:${quoted(field(input, "question"))}`)
    case "demo":
      return activityLine(`building demo:${quoted(field(input, "title"))}`)
    case "visual":
      return activityLine(`drawing:${quoted(field(input, "brief"))}`)
  }
}

/** The failure shape's reason, as its kind words it. */
const failureReasonOf = (kind: JobKind, result: SubagentResult): string | undefined => {
  if (!isSubagentFailure(kind, result)) return undefined
  const r = result as { brief?: string; notes?: string }
  return r.notes ?? r.brief?.replace(/^Research failed:\s*/i, "") ?? "failed"
}

/** What the job did, from its result. */
export const finalActivity = (kind: JobKind, result: SubagentResult): string => {
  const reason = failureReasonOf(kind, result)
  if (reason !== undefined) return activityLine(`error: ${reason}`)
  switch (kind) {
    case "research": {
      const n = (result as ResearchResult).sources.length
      return n === 0 ? "done: no sources" : `done: ${n} source${n === 1 ? "" : "s"}`
    }
    case "demo":
      return activityLine(`done: demo${quoted((result as DemoResult).title)}`)
    case "visual":
      return "done: figure"
  }
}
