/**
 * `switchboard chat` asking the user about a server tool call that waits for approval
 * (docs/tools.md): the question, and the answer read from the next line typed.
 */
import type { PendingApproval } from "@switchboard/domain"

/** `Allow everything__get-sum {"a":2,"b":3}? [y/N] ` */
export const approvalQuestion = (pending: PendingApproval): string => `Allow ${pending.toolName} ${JSON.stringify(pending.input)}? [y/N] `

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
