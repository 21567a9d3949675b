/**
 * The words the jobs views use: a kind's name, what a job was asked, the quiet one-liner of a
 * finished job, a failure's reason, and an age. Plain functions of the domain's records.
 */
import type { JobKind, JobRecord, SubagentResult } from "@switchboard/domain"
import { isJobKind, jobKindSpecOf } from "@switchboard/domain"

export const kindLabels: Readonly<Record<JobKind, string>> = { research: "Research", demo: "Demo", visual: "Figure" }

export const kindLabel = (kind: string): string => (isJobKind(kind) ? kindLabels[kind] : kind)

/** What the job tool call asked for: the question, the demo's title, the figure's brief. */
export const askedFor = (args: Readonly<Record<string, unknown>>): string | undefined => {
  for (const key of ["question", "title", "brief"]) {
    const value = args[key]
    if (typeof value === "string" && value.trim() !== "") return value.trim()
  }
  return undefined
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

/** The failure's reason when `result` is its kind's failure shape. */
export const failureReasonOf = (kind: JobKind, result: SubagentResult): string | undefined =>
  jobKindSpecOf(kind).failureReason(result)

/** What a successful result is, in a few words: "3 sources", "“Pendulum”", "SVG". */
export const resultSummary = (kind: JobKind, result: SubagentResult): string => {
  if (kind === "research" && "sources" in result) return plural(result.sources.length, "source")
  if (kind === "demo" && "title" in result) return `“${result.title}”`
  if (kind === "visual") return "SVG"
  return "result"
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
