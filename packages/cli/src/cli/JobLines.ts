/**
 * What the job watch's events look like on a terminal: a dispatch card and
 * the live activity line on stderr; each steer's result (a research brief
 * with its sources; a demo or a figure saved to a file whose path is printed)
 * and the wake turn's answer on stdout.
 */
import type { JobEvent } from "@switchboard/client"
import type { ChatMessage, DemoResult, JobRecord, ResearchResult, VisualResult } from "@switchboard/domain"
import { isSubagentFailure, subagentArtifactOf, subagentResultOf } from "@switchboard/domain"
import { Console, Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"

const shortId = (id: string) => id.replace(/^job_/, "").slice(0, 8)
const label = (job: Pick<JobRecord, "id" | "kind">) => `[${job.kind} ${shortId(job.id)}]`

/** What a steer's artifact becomes on the terminal (and on disk, for demos and figures). */
export const describeSteer = (message: ChatMessage, artifactsDir: string): string => {
  const meta = subagentResultOf(message)
  const artifact = subagentArtifactOf(message)
  if (meta === undefined || artifact === undefined) return message.content
  const head = `── ${meta.kind} result ${label({ id: meta.jobId, kind: meta.kind })} ──`
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
    default:
      // A kind this terminal has no rendering for yet (a newer server's): its text, which the model saw too.
      return `${head}\n${message.content}`
  }
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
      return Console.error(`${label(event.job)} dispatched${event.job.status === "running" ? ", running in the background" : ""}`)
    case "activity":
      return Console.error(`${label(event.job)} ${event.job.activity}`)
    case "settled":
      return Console.error(`${label(event.job)} ${event.job.status}`)
    case "steer":
      return Console.log(describeSteer(event.message, artifactsDir))
    case "answer":
      return Console.log(event.message.content)
    case "pollFailed":
      return Console.error(`switchboard: cannot follow the jobs: ${event.message}`)
  }
}
