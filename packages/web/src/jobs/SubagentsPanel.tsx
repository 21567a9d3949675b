/**
 * The sidebar's list of the chat's jobs, newest first: kind, status, activity and age (kept
 * current). A job parked on a call that needs the user's approval is `waiting`, its line
 * "waiting for approval: <tool>". Each entry leads to its dispatch card in the transcript, where
 * the approval is decided.
 */
import type { JobRecord } from "@switchboard/domain"
import { useEffect, useState } from "react"
import { useStore } from "zustand"
import { dispatchCardId } from "./DispatchCard.tsx"
import { useJobsContext } from "./JobsContext.tsx"
import { ageOf, jobLine, jobState, kindClass, kindLabel, spokenAge } from "./JobText.ts"

/** The time, again every `ms`: ages move on while the panel is shown. */
const useNow = (ms: number): number => {
  const [now, setNow] = useState(() => Date.now())
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms)
    return () => clearInterval(timer)
  }, [ms])
  return now
}

const newestFirst = (jobs: ReadonlyArray<JobRecord>) =>
  [...jobs].sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || b.id.localeCompare(a.id))

const showCard = (toolCallId: string) => {
  const card = document.getElementById(dispatchCardId(toolCallId))
  if (card === null) return
  card.scrollIntoView({ block: "center", behavior: "smooth" })
  card.focus({ preventScroll: true })
}

export function SubagentsPanel() {
  const { pollError, store } = useJobsContext()
  const jobs = useStore(store, (state) => state.jobs)
  const now = useNow(1_000)
  const sorted = newestFirst(jobs)
  return (
    <section className="subagents-panel" aria-labelledby="subagents-heading">
      <h2 id="subagents-heading">Sub-agents</h2>
      {pollError !== undefined && <p className="subagents-panel__error" role="alert">Cannot follow the jobs: {pollError}</p>}
      {sorted.length === 0
        ? <p className="subagents-panel__empty">No sub-agents yet. When the agent hands work off to one — research, a demo, a figure or another kind — it shows here.</p>
        : (
          <ul className="subagents-list">
            {sorted.map((job) => {
              const status = jobState(job)
              return (
                <li key={job.id} className={`subagents-item subagents-item--${status}`} data-job-id={job.id}>
                  <div className="subagents-item__head">
                    <span className={kindClass(job.kind)}>{kindLabel(job.kind)}</span>
                    <span className={`job-status job-status--${status}`}>{status}</span>
                    <time className="subagents-item__age" dateTime={job.createdAt} title={new Date(job.createdAt).toLocaleString()}>
                      <span aria-hidden="true">{ageOf(job.createdAt, now)}</span>
                      <span className="visually-hidden">{spokenAge(job.createdAt, now)}</span>
                    </time>
                  </div>
                  <button type="button" className="subagents-item__activity" onClick={() => showCard(job.toolCallId)}>
                    <span className="visually-hidden">Show the card of this job: </span>
                    {jobLine(job)}
                  </button>
                </li>
              )
            })}
          </ul>
        )}
    </section>
  )
}
