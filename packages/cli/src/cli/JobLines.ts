/**
 * What the job watch's events look like on a terminal: a dispatch card and
 * the live activity line on stderr; each steer's result (a research brief
 * with its sources; a demo or a figure saved to a file whose path is printed;
 * a defined kind's result as readable text, or its failure's reason) and the
 * wake turn's answer on stdout.
 */
import type { JobEvent } from "@switchboard/client"
import type { ChatMessage, DemoResult, JobRecord, ResearchResult, VisualResult } from "@switchboard/domain"
import { definedKindSpec, isBuiltInKind, isSubagentFailure, readableResult, subagentArtifactOf, subagentResultOf } from "@switchboard/domain"
import { Console, Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"

/** `job_1a2b3c4d…` → `1a2b3c4d` */
export const shortJobId = (id: string) => id.replace(/^job_/, "").slice(0, 8)
/** `[refund-run 1a2b3c4d]`: how the terminal names a job. */
export const jobLabel = (job: Pick<JobRecord, "id" | "kind">) => `[${job.kind} ${shortJobId(job.id)}]`

/** What a steer's artifact becomes on the terminal (and on disk, for demos and figures). */
export const describeSteer = (message: ChatMessage, artifactsDir: string): string => {
  const meta = subagentResultOf(message)
  const artifact = subagentArtifactOf(message)
  if (meta === undefined || artifact === undefined) return message.content
  const head = `── ${meta.kind} result ${jobLabel({ id: meta.jobId, kind: meta.kind })} ──`
  if (!isBuiltInKind(artifact.kind)) {
    // The steer's text shows the result in its schema's order, which the stored artifact (jsonb) lost.
    const shown = message.content.indexOf("\n\n")
    const failed = definedKindSpec(artifact.kind).failureReason(artifact.result) !== undefined
    return `${head}\n${!failed && shown >= 0 ? message.content.slice(shown + 2) : describeDefinedResult(artifact.kind, artifact.result)}`
  }
  if (isSubagentFailure(artifact.kind, artifact.result)) return `${head}\n${message.content}`
  switch (artifact.kind) {
    case "research": {
      const r = artifact.result as ResearchResult
      const sources = r.sources.length === 0
        ? "Sources: (none)"
        : `Sources:\n${r.sources.map((s) => `  - ${s.title === "" ? s.url : `${s.title} <${s.url}>`}`).join("\n")}`
      return `${head}\n${r.brief}\n${sources}`
    }
    case "demo": {
      const r = artifact.result as DemoResult
      const file = save(artifactsDir, meta.jobId, "html", r.html)
      return `${head}\nDemo "${r.title}"${r.tested ? " (tested in a headless browser)" : ""} saved to ${file}${
        r.notes ? `\nNotes: ${r.notes}` : ""
      }`
    }
    case "visual": {
      const r = artifact.result as VisualResult
      const file = save(artifactsDir, meta.jobId, "svg", r.svg)
      return `${head}\nFigure saved to ${file}${r.notes ? `\nNotes: ${r.notes}` : ""}`
    }
  }
}

/**
 * A defined kind's result (any JSON object: what its sub-agent submitted) as readable text,
 * `key: value` lines; its failure shape (`{ error }`) as `failed: <reason>`.
 */
export const describeDefinedResult = (kind: string, result: Readonly<Record<string, unknown>>): string => {
  const reason = definedKindSpec(kind).failureReason(result)
  return reason === undefined ? readableResult(result) : `failed: ${reason}`
}

/**
 * Saves a job's artifact under `dir`, named for the job. The id is the transcript's word, not ours:
 * anything but letters, digits, `_` and `-` is replaced, so no id ("../x", "/etc/x") writes
 * outside `dir`.
 */
const save = (dir: string, jobId: string, extension: string, content: string) => {
  fs.mkdirSync(dir, { recursive: true })
  const file = path.join(dir, `${jobId.replace(/[^A-Za-z0-9_-]/g, "_")}.${extension}`)
  fs.writeFileSync(file, content)
  return file
}

/** The job watch's `onEvent` for a terminal; demos and figures are saved under `artifactsDir`. */
export const printJobEvent = (artifactsDir: string) => (event: JobEvent): Effect.Effect<void> => {
  switch (event.type) {
    case "dispatched":
      return Console.error(`${jobLabel(event.job)} dispatched${event.job.status === "running" ? ", running in the background" : ""}`)
    case "activity":
      return Console.error(`${jobLabel(event.job)} ${event.job.activity}`)
    case "waiting":
      // The activity line says it; the question is the chat command's (JobApprovals.ts).
      return Effect.void
    case "settled":
      return Console.error(`${jobLabel(event.job)} ${event.job.status}`)
    case "steer":
      return Console.log(describeSteer(event.message, artifactsDir))
    case "answer":
      return Console.log(event.message.content)
    case "pollFailed":
      return Console.error(`switchboard: cannot follow the jobs: ${event.message}`)
  }
}
