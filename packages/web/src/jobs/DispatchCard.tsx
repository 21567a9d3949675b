/**
 * A job tool call in the transcript: what was handed off, and what its sub-agent is doing —
 * the live activity line from the one poll while it runs, a quiet one-liner once it is done
 * ("research done · 3 sources"), the reason when it failed. Found by the call's id, which is the
 * job's `toolCallId`.
 *
 * A job parked on its sub-agent's call that needs the user's approval (`job.waitingFor`) shows
 * that call's approval card inside it — the turn's own `PendingApproval`: the tool, its input,
 * Approve, a reason, Deny — decided with the chat's approval route. It goes once the record waits
 * no more (decided here, elsewhere, or by the timeout); the job runs again and its result card
 * comes as any job's.
 */
import { jobOfToolCall } from "@switchboard/client"
import type { JobWaitingFor } from "@switchboard/domain"
import { useEffect } from "react"
import { useStore } from "zustand"
import { PendingApproval } from "../chat/parts/PendingApproval.tsx"
import type { DecideApproval } from "../chat/parts/PendingApproval.tsx"
import { useJobsContext } from "./JobsContext.tsx"
import { askedFor, jobLine, jobState, kindClass, kindLabel } from "./JobText.ts"

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

/** The approval a parked job waits on, sent with the jobs context's `decide`. */
function JobApproval({ waitingFor }: { readonly waitingFor: JobWaitingFor }) {
  const { decide } = useJobsContext()
  const send: DecideApproval = async (approved, reason) => {
    const outcome = await decide(waitingFor.approvalId, approved, reason)
    switch (outcome.type) {
      case "sent":
        return undefined
      case "decided":
        return { text: "Decided already (in another tab, or by the CLI): the job goes on as decided there." }
      case "failed":
        return { text: `The decision was not sent: ${outcome.message}`, retry: true }
    }
  }
  return (
    <div className="dispatch-card__approval">
      <PendingApproval name={waitingFor.toolName} input={waitingFor.input} asker="The sub-agent" decide={send} />
    </div>
  )
}

export function DispatchCard({ input, kind, toolCallId }: DispatchCardProps) {
  const { kick, store } = useJobsContext()
  const job = useStore(store, (state) => jobOfToolCall(state, toolCallId))
  const known = job !== undefined
  // A card whose job no poll has listed yet (a turn just dispatched it): poll now rather than idly.
  useEffect(() => {
    if (!known) kick()
  }, [known, kick])

  const asked = isObject(input) ? askedFor(input) : undefined
  const state = job === undefined ? "pending" : jobState(job)
  const waitingFor = job?.status === "running" ? job.waitingFor : undefined
  const line = job === undefined ? "dispatched" : jobLine(job)

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
      {waitingFor === undefined ? null : <JobApproval key={waitingFor.approvalId} waitingFor={waitingFor} />}
    </div>
  )
}
