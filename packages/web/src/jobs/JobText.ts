/**
 * The words the jobs views use: a kind's name, what a job was asked, the quiet one-liner of a
 * finished job, a failure's reason, and an age. Plain functions of the domain's records, for any
 * kind (and where it stands: running, waiting for the user's approval, done, failed): the three built-in ones have their own words, a kind an operator defined is called by its
 * name and its result summed up from what it holds.
 */
import type { JobKind, JobRecord, SubagentResult } from "@switchboard/domain"
import { isJobKind, jobKindSpecOf, waitingActivity } from "@switchboard/domain"

export const kindLabels: Readonly<Record<JobKind, string>> = { research: "Research", demo: "Demo", visual: "Figure" }

export const kindLabel = (kind: string): string => (isJobKind(kind) ? kindLabels[kind] : kind)

/** A kind's pill: `job-kind--research` and the like; a defined kind's name is the operator's, so its class is `job-kind--defined`. */
export const kindClass = (kind: string): string => `job-kind job-kind--${isJobKind(kind) ? kind : "defined"}`

const firstLine = (text: string, max: number): string => {
  const line = text.trim().split("\n")[0]!.trim()
  return line.length <= max ? line : `${line.slice(0, max - 1).trimEnd()}…`
}

/**
 * What the job tool call asked for: the question, the demo's title, the figure's brief — and for
 * a defined kind, whose input is its own, the first text among its arguments.
 */
export const askedFor = (args: Readonly<Record<string, unknown>>): string | undefined => {
  for (const key of ["question", "title", "brief"]) {
    const value = args[key]
    if (typeof value === "string" && value.trim() !== "") return value.trim()
  }
  const text = Object.values(args).find((value): value is string => typeof value === "string" && value.trim() !== "")
  return text === undefined ? undefined : firstLine(text, 200)
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

/** The failure's reason when `result` is its kind's failure shape (a defined kind's: `{ error }`). */
export const failureReasonOf = (kind: string, result: SubagentResult): string | undefined =>
  jobKindSpecOf(kind).failureReason(result)

/** Text that is more than a line: several lines, or Markdown's blocks (a heading, a list, code). */
export const isBlockText = (text: string): boolean => text.includes("\n") || /^\s*(#{1,6}\s|[-*+]\s|\d+[.)]\s|```)/.test(text)

/**
 * What a successful result is, in a few words: "3 sources", "“Pendulum”", "SVG"; a defined kind's,
 * its first line of text (a headline, a title; else the first line of a longer text), else how many
 * fields it has.
 */
export const resultSummary = (kind: string, result: SubagentResult): string => {
  const fields: Readonly<Record<string, unknown>> = result
  const { sources, title } = fields
  if (kind === "research" && Array.isArray(sources)) return plural(sources.length, "source")
  if (kind === "demo" && typeof title === "string") return `“${title}”`
  if (kind === "visual") return "SVG"
  const texts = Object.values(fields).filter((value): value is string => typeof value === "string" && value.trim() !== "")
  const text = texts.find((value) => !isBlockText(value)) ?? texts[0]?.replace(/^\s*(#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|```\w*)/, "")
  if (text !== undefined && text.trim() !== "") return `“${firstLine(text, 80)}”`
  const count = Object.keys(fields).length
  return count === 0 ? "an empty result" : plural(count, "field")
}

/** Why a job failed: its error, its result's failure reason, or its last activity line. */
export const jobFailure = (job: JobRecord): string => {
  if (job.error !== undefined && job.error !== "") return job.error
  const reason = job.result !== undefined ? failureReasonOf(job.kind, job.result) : undefined
  if (reason !== undefined) return reason
  return job.activity.replace(/^error:\s*/, "") || "failed"
}

/** Whether the job ended in failure (its status, or the failure shape delivered as `done`). */
export const jobFailed = (job: JobRecord): boolean =>
  job.status === "error" || (job.result !== undefined && failureReasonOf(job.kind, job.result) !== undefined)

/** The quiet line of a finished job: "research done · 3 sources". */
export const finishedLine = (job: JobRecord): string => {
  const kind = kindLabel(job.kind).toLowerCase()
  if (jobFailed(job)) return `${kind} failed · ${jobFailure(job)}`
  const what = job.result !== undefined ? resultSummary(job.kind, job.result) : job.activity.replace(/^done:\s*/, "")
  return `${kind} done · ${what}`
}

/** Where a job stands: `waiting` is running, parked on its sub-agent's call that needs the user's approval. */
export const jobState = (job: JobRecord): "running" | "waiting" | "done" | "failed" =>
  job.status === "running" ? (job.waitingFor === undefined ? "running" : "waiting") : jobFailed(job) ? "failed" : "done"

/** A job's line: its activity while it runs ("waiting for approval: <tool>" parked), its quiet one-liner once finished. */
export const jobLine = (job: JobRecord): string =>
  job.status !== "running"
    ? finishedLine(job)
    : job.waitingFor === undefined
    ? job.activity
    : waitingActivity(job.waitingFor.toolName)

/** "just now", "42 s", "3 min", "2 h", "5 d": how long ago `iso` was at `now`. */
export const ageOf = (iso: string, now: number): string => {
  const seconds = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000))
  if (!Number.isFinite(seconds)) return ""
  if (seconds < 5) return "just now"
  if (seconds < 60) return `${seconds} s`
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h`
  return `${Math.floor(seconds / 86_400)} d`
}

/** The same age, spelled out for a screen reader: "3 minutes ago". */
export const spokenAge = (iso: string, now: number): string => {
  const short = ageOf(iso, now)
  if (short === "just now" || short === "") return short
  const [n, unit] = short.split(" ")
  const words: Record<string, string> = { s: "second", min: "minute", h: "hour", d: "day" }
  return `${plural(Number(n), words[unit ?? ""] ?? unit ?? "")} ago`
}
