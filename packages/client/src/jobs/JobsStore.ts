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
    setJobs: (jobs) => set({ jobs }),
    clear: () => set({ jobs: [] })
  }))

/** The job a tool call dispatched, for its card. */
export const jobOfToolCall = (state: JobsState, toolCallId: string): JobRecord | undefined =>
  state.jobs.find((job) => job.toolCallId === toolCallId)
