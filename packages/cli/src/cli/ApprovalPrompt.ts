/**
 * `switchboard chat` asking the user about a server tool call that waits for approval
 * (docs/tools.md) — a turn's, or a sub-agent job's parked on it (docs/subagents.md): the
 * question, and the answer read from the next line typed.
 */
import type { JobRecord, JobWaitingFor, PendingApproval } from "@switchboard/domain"
import { shortJobId } from "./JobLines.ts"

/** `Allow everything__get-sum {"a":2,"b":3}? [y/N] ` */
export const approvalQuestion = (pending: PendingApproval): string => `Allow ${pending.toolName} ${JSON.stringify(pending.input)}? [y/N] `

/** `Allow shop__refund {"order":1} (job refund-run 1a2b3c4d)? [y/N] ` */
export const jobApprovalQuestion = (job: Pick<JobRecord, "id" | "kind">, waitingFor: JobWaitingFor): string =>
  `Allow ${waitingFor.toolName} ${JSON.stringify(waitingFor.input)} (job ${job.kind} ${shortJobId(job.id)})? [y/N] `

/**
 * `y` or `yes` approves; anything else denies — `n too risky` (or `no, too risky`) with the reason
 * after the no, an empty line (or the end of the input) without one.
 */
export const approvalAnswer = (line: string | undefined): { readonly approved: boolean; readonly reason?: string } => {
  const text = (line ?? "").trim()
  if (/^y(es)?$/iu.test(text)) return { approved: true }
  const reason = text.replace(/^no?\b[\s,:;.-]*/iu, "").trim()
  return reason === "" ? { approved: false } : { approved: false, reason }
}
