/**
 * The jobs of the conversation in view, as the one poll of `/api/jobs` last
 * saw them: what a UI's dispatch cards (by `toolCallId`) and sub-agents panel
 * render. Not persisted: the server has them, and a poll brings them back.
 */
import type { JobRecord } from "@switchboard/domain"
import { createStore } from "zustand/vanilla"
import type { StoreApi } from "zustand/vanilla"

export interface JobsState {
  /** Newest first, as the server lists them. */
  readonly jobs: ReadonlyArray<JobRecord>
  readonly setJobs: (jobs: ReadonlyArray<JobRecord>) => void
  readonly clear: () => void
}

export type JobsStore = StoreApi<JobsState>

export const makeJobsStore = (): JobsStore =>
  createStore<JobsState>()((set) => ({
    jobs: [],
    // A listing without results (`results=omit`) leaves the ones an earlier listing brought.
    setJobs: (jobs) => set((state) => ({ jobs: withResultsKept(state.jobs, jobs) })),
    clear: () => set({ jobs: [] })
  }))

const withResultsKept = (before: ReadonlyArray<JobRecord>, jobs: ReadonlyArray<JobRecord>): ReadonlyArray<JobRecord> => {
  const held = new Map(before.flatMap((job) => job.result === undefined ? [] : [[job.id, job.result] as const]))
  if (held.size === 0) return jobs
  return jobs.map((job) => {
    const result = held.get(job.id)
    return job.result !== undefined || result === undefined || job.status === "running" ? job : { ...job, result }
  })
}

/** The job a tool call dispatched, for its card. */
export const jobOfToolCall = (state: JobsState, toolCallId: string): JobRecord | undefined =>
  state.jobs.find((job) => job.toolCallId === toolCallId)
