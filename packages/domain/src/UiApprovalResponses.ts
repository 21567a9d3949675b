/**
 * The decisions a `useChat` request carries (docs/tools.md, approvals): tool parts in state
 * `approval-responded`, as the AI SDK's `addToolApprovalResponse` leaves them.
 */
import type { UiMessage } from "./UiMessages.ts"
import { isUiToolPart } from "./UiMessages.ts"

/** A decision a UIMessage carries: a tool part in state `approval-responded` (`addToolApprovalResponse`). */
export interface UiApprovalResponse {
  readonly approvalId: string
  readonly toolCallId: string
  readonly approved: boolean
  readonly reason?: string
}

/** The decisions the messages' tool parts carry, in order. */
export const approvalResponsesOf = (messages: ReadonlyArray<UiMessage>): Array<UiApprovalResponse> =>
  messages.flatMap((ui) =>
    ui.role !== "assistant" ? [] : ui.parts.filter(isUiToolPart).flatMap((part): Array<UiApprovalResponse> => {
      const approval = part.approval
      if (part.state !== "approval-responded" || approval === undefined || approval.approved === undefined) return []
      return [{
        approvalId: approval.id,
        toolCallId: part.toolCallId,
        approved: approval.approved,
        ...(approval.reason === undefined ? {} : { reason: approval.reason })
      }]
    })
  )
