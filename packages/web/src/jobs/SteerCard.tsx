/**
 * A sub-agent's result as the transcript carries it (a steer message: user-role on the wire, but
 * never shown as the user's own message): a card saying which sub-agent it is from, and its
 * result by kind — the research brief with its sources as links, the demo running in its
 * sandboxed frame, the figure as an image with a download, a kind an operator defined as the
 * readable tree of what its sub-agent submitted (`ResultTree`) — or why it failed. The card draws
 * the steer's `data-subagent-artifact` part; the text part is the model's, shown only by a steer
 * without a valid artifact.
 */
import type { DemoResult, JobKind, ResearchResult, SubagentArtifactData, SubagentResult, SubagentResultMeta, VisualResult } from "@switchboard/domain"
import { isJobKind } from "@switchboard/domain"
import { BriefText, ExternalLink, webUrl } from "./BriefText.tsx"
import { DemoFrame } from "./DemoFrame.tsx"
import { failureReasonOf, kindLabel, resultSummary } from "./JobText.ts"
import { ResultTree } from "./ResultTree.tsx"
import { useStore } from "zustand"
import { useJobsContext } from "./JobsContext.tsx"
import { SvgFigure } from "./SvgFigure.tsx"

export interface SteerCardProps {
  /** The steer message's id. */
  readonly messageId: string
  /** The steer's marker (`metadata.subagentResult`: its job), when it has one. */
  readonly marker: SubagentResultMeta | undefined
  /** The full result, from the `data-subagent-artifact` part, when the steer carries a valid one. */
  readonly artifact: SubagentArtifactData | undefined
  /** Without an artifact: the steer's text, shown as the brief. */
  readonly text?: string | undefined
}

const headings: Readonly<Record<JobKind, string>> = {
  research: "Research result",
  demo: "Demo from the builder",
  visual: "Figure from the visual maker"
}

/** A built-in kind's heading; a defined kind's, its name: "digest result". */
const headingOf = (kind: string) => (isJobKind(kind) ? headings[kind] : `${kind} result`)

function ResearchBody({ result }: { readonly result: ResearchResult }) {
  return (
    <>
      <BriefText text={result.brief} />
      {result.sources.length > 0 && (
        <div className="steer-card__sources">
          <p className="steer-card__label">Sources</p>
          <ol>
            {result.sources.map((source, i) => {
              const href = webUrl(source.url)
              const label = source.title.trim() === "" ? source.url : source.title
              return (
                <li key={i}>
                  {href === undefined ? label : <ExternalLink href={href}>{label}</ExternalLink>}
                  {href !== undefined && <span className="steer-card__host"> — {new URL(href).host}</span>}
                </li>
              )
            })}
          </ol>
        </div>
      )}
    </>
  )
}

function DemoBody({ jobId, result }: { readonly jobId: string; readonly result: DemoResult }) {
  return (
    <>
      <p className="steer-card__title">{result.title}</p>
      <DemoFrame key={jobId} title={result.title} html={result.html} />
      {result.notes !== undefined && <p className="steer-card__notes">{result.notes}</p>}
      {!result.tested && <p className="steer-card__notes">Not tested in a headless browser.</p>}
    </>
  )
}

function VisualBody({ jobId, result }: { readonly jobId: string; readonly result: VisualResult }) {
  return (
    <>
      <SvgFigure svg={result.svg} alt={result.notes ?? "The figure the visual sub-agent drew"} fileName={`figure-${jobId}.svg`} />
      {result.notes !== undefined && <p className="steer-card__notes">{result.notes}</p>}
    </>
  )
}

const body = (kind: string, jobId: string, result: SubagentResult) => {
  switch (kind) {
    case "research":
      return <ResearchBody result={result as ResearchResult} />
    case "demo":
      return <DemoBody jobId={jobId} result={result as DemoResult} />
    case "visual":
      return <VisualBody jobId={jobId} result={result as VisualResult} />
    default:
      return <ResultTree value={result} />
  }
}

export function SteerCard({ artifact: stored, marker, messageId, text }: SteerCardProps) {
  const kind = stored?.kind ?? marker?.kind
  const jobId = marker?.jobId ?? messageId
  // A defined kind's result as the job list gives it, in its schema's order (the transcript's copy lost the order).
  const { store } = useJobsContext()
  const listed = useStore(store, (state) => state.jobs.find((job) => job.id === jobId)?.result)
  const artifact = stored !== undefined && listed !== undefined && !isJobKind(stored.kind) ? { ...stored, result: listed } : stored
  const headingId = `steer-${messageId}-heading`
  const failure = artifact !== undefined ? failureReasonOf(artifact.kind, artifact.result) : undefined
  const state = artifact === undefined ? "text" : failure !== undefined ? "failed" : "done"
  return (
    <article
      // A defined kind's name is the operator's (it may read "failed"): a class of its own only for a built-in one.
      className={`job-card steer-card steer-card--${kind === undefined ? "unknown" : isJobKind(kind) ? kind : "defined"} steer-card--${state}`}
      aria-labelledby={headingId}
      data-steer-job-id={jobId}
      data-kind={kind}
    >
      <header className="steer-card__head">
        <span className="steer-card__from">Sub-agent</span>
        <h3 id={headingId} className="steer-card__heading">
          {kind === undefined ? "Sub-agent result" : failure !== undefined ? `${kindLabel(kind)} failed` : headingOf(kind)}
        </h3>
        {artifact?.kind === "research" && failure === undefined && (
          <span className="steer-card__summary">{resultSummary(artifact.kind, artifact.result)}</span>
        )}
      </header>
      {artifact === undefined
        ? <BriefText text={text ?? ""} />
        : failure !== undefined
        ? <p className="steer-card__failure">{failure}</p>
        : body(artifact.kind, jobId, artifact.result)}
    </article>
  )
}
