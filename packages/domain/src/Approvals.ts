/**
 * Approvals (docs/tools.md): a call of a server tool that needs a user's yes
 * is not run; the turn stores it unanswered and ends, and the user's decision
 * continues the chat as a turn of its own.
 *
 * Where a pending approval lives: in the transcript. The assistant message
 * that made the call names it in `metadata.approvals` (approval id → call
 * id), stored by the statement that stores the message, so it survives what
 * the message survives; it is pending while no decision is recorded and no
 * tool message answers the call. The answer the continuation stores has the
 * id `approvalResultId(approvalId)` and says the decision in
 * `metadata.approval`.
 */
import { Schema } from "effect"
import type { ChatMessage, PendingApproval, ToolCall } from "./Chat.ts"
import { Text } from "./Json.ts"

/** `apr_` and a UUID's hex: unguessable, as it rides in a URL. */
export const ApprovalId = Schema.String.check(
  Schema.isPattern(/^apr_[A-Za-z0-9_-]{1,64}$/u, { message: "must be an approval id (apr_…)" })
)

/** The longest reason a user may give. */
export const MAX_APPROVAL_REASON = 1000

/** `POST /api/chats/{chatId}/approvals/{approvalId}`'s body. */
export const ApprovalDecision = Schema.Struct({
  approved: Schema.Boolean,
  reason: Schema.optionalKey(Text.check(Schema.isMaxLength(MAX_APPROVAL_REASON)))
})
export type ApprovalDecision = typeof ApprovalDecision.Type

/** The decision's 202: recorded; the chat goes on as a turn of its own. */
export const ApprovalAccepted = Schema.Struct({ accepted: Schema.Literal(true) })
export type ApprovalAccepted = typeof ApprovalAccepted.Type

/** What the model reads of a denied call. */
export const DENIED_BY_THE_USER = "denied by the user"
export const deniedError = (reason: string | undefined): string =>
  reason === undefined || reason.trim() === "" ? DENIED_BY_THE_USER : `${DENIED_BY_THE_USER}: ${reason}`

/** The id of the tool message that answers an approval's call. */
export const approvalResultId = (approvalId: string): string => `approval_${approvalId}`

/** The approvals an assistant message asks for: approval id → the call's id. */
export const approvalsOf = (message: ChatMessage): Readonly<Record<string, string>> => {
  const approvals = message.metadata?.["approvals"]
  if (typeof approvals !== "object" || approvals === null || Array.isArray(approvals)) return {}
  const found: Record<string, string> = {}
  for (const [id, callId] of Object.entries(approvals)) if (typeof callId === "string") found[id] = callId
  return found
}

/** The decision a tool message answering an approval records (`metadata.approval`). */
export interface RecordedDecision {
  readonly id: string
  readonly approved: boolean
  readonly reason?: string
}

export const decisionOf = (message: ChatMessage): RecordedDecision | undefined => {
  const approval = message.metadata?.["approval"]
  if (typeof approval !== "object" || approval === null || Array.isArray(approval)) return undefined
  const { approved, id, reason } = approval as Record<string, unknown>
  if (typeof id !== "string" || typeof approved !== "boolean") return undefined
  return typeof reason === "string" ? { id, approved, reason } : { id, approved }
}

/** Every approval the transcript asks for, with its call, and whether a tool message answers it. */
export const approvalsIn = (transcript: ReadonlyArray<ChatMessage>): Array<{
  readonly approvalId: string
  readonly call: ToolCall
  readonly message: ChatMessage
  readonly answered: boolean
}> => {
  const answered = new Set(transcript.flatMap((m) => m.toolResult === undefined ? [] : [m.toolResult.toolCallId]))
  return transcript.flatMap((message) => {
    if (message.role !== "assistant") return []
    return Object.entries(approvalsOf(message)).flatMap(([approvalId, callId]) => {
      const call = message.toolCalls?.find((c) => c.id === callId)
      return call === undefined ? [] : [{ approvalId, call, message, answered: answered.has(callId) }]
    })
  })
}

/** The transcript's approvals no tool message answers yet, as an answer lists them. */
export const pendingApprovalsIn = (transcript: ReadonlyArray<ChatMessage>): Array<PendingApproval> =>
  approvalsIn(transcript).filter((a) => !a.answered).map(({ approvalId, call }) => ({
    approvalId,
    toolCallId: call.id,
    toolName: call.name,
    input: call.args
  }))
