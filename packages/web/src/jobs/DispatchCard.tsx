/**
 * A job tool call in the transcript: what was handed off, and what its sub-agent is doing —
 * the live activity line from the one poll while it runs, a quiet one-liner once it is done
 * ("research done · 3 sources"), the reason when it failed. Found by the call's id, which is the
 * job's `toolCallId`.
 */
import { jobOfToolCall } from "@switchboard/client"
import { useEffect } from "react"
import { useStore } from "zustand"
import { useJobsContext } from "./JobsContext.tsx"
import { askedFor, finishedLine, jobFailed, kindClass, kindLabel } from "./JobText.ts"

export interface DispatchCardProps {
  /** The job tool call's id (the job's `toolCallId`): its tool part's `toolCallId`. */
  readonly toolCallId: string
  /** The job's kind: the tool's name (a built-in kind's or a defined one's). */
  readonly kind: string
  /** The call's input, as its tool part carries it. */
  readonly input: unknown
}

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The id of a call's card in the page: the sub-agents panel scrolls to it. */
export const dispatchCardId = (toolCallId: string) => `dispatch-${toolCallId}`

export function DispatchCard({ input, kind, toolCallId }: DispatchCardProps) {
  const { kick, store } = useJobsContext()
  const job = useStore(store, (state) => jobOfToolCall(state, toolCallId))
  const known = job !== undefined
  // A card whose job no poll has listed yet (a turn just dispatched it): poll now rather than idly.
  useEffect(() => {
    if (!known) kick()
  }, [known, kick])

  const asked = isObject(input) ? askedFor(input) : undefined
  const state = job === undefined ? "pending" : job.status === "running" ? "running" : jobFailed(job) ? "failed" : "done"
  const line = job === undefined
    ? "dispatched"
    : state === "running"
    ? job.activity
    : finishedLine(job)

  return (
    <div
      className={`job-card dispatch-card dispatch-card--${state}`}
      id={dispatchCardId(toolCallId)}
      tabIndex={-1}
      data-tool-call-id={toolCallId}
      data-job-status={state}
    >
      <div className="dispatch-card__head">
        <span className={kindClass(kind)}>{kindLabel(kind)}</span>
        {asked !== undefined && <span className="dispatch-card__asked" title={asked}>{asked}</span>}
      </div>
      <p className="dispatch-card__line" role="status">
        {(state === "running" || state === "pending") && <span className="spinner" aria-hidden="true" />}
        {state === "failed" && <span className="visually-hidden">Failed: </span>}
        <span className="dispatch-card__text">{line}</span>
      </p>
    </div>
  )
}
