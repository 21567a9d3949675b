/**
 * A sub-agent's result, as the job record and the chat can keep it. The steer
 * carries the result twice (its text, and the artifact), and a steer over
 * `maxStoredValueBytes` would be stored and never read back (the driver
 * refuses a row over 16 MiB), failing every wake and the chat's transcript:
 * such a result becomes the failure shape, saying why, before anything is
 * stored — by the runner, and again by the wake for a result stored before
 * this bound.
 */
import type { JobInput, JobRecord, SubagentResult } from "@switchboard/domain"
import { buildSubagentSteer, subagentFailure } from "@switchboard/domain"
import { fitsStorage, storedBytes } from "../db/StoredSize.ts"

export const TOO_LARGE_NOTE = "the result was too large to store"

/** `result` when its steer fits, else the failure shape (and the steer's size, for the log). */
export const storableResult = (
  job: Pick<JobRecord, "id" | "kind" | "toolCallId"> & { readonly input: unknown },
  result: SubagentResult
): { readonly result: SubagentResult; readonly oversizedBytes?: number } => {
  const steer = buildSubagentSteer(job, result)
  return fitsStorage(steer)
    ? { result }
    : { result: subagentFailure(job.kind, job.input as JobInput, TOO_LARGE_NOTE), oversizedBytes: storedBytes(steer) }
}
