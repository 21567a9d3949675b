/**
 * A tool call that needs the user's approval before it runs (the AI SDK's `approval-requested`),
 * or whose approval was answered and which has not run yet (`approval-responded`): the tool and
 * the input it will run with, and where the approval stands. On the chat page it asks: Approve,
 * or Deny with a reason — the decision goes to the server (`ChatSession.decide`), which runs the
 * tool once and continues the chat. The card comes from the transcript, so it survives a reload.
 */
import { memo, useContext, useState } from "react"
import type { ToolPart } from "../UiChat.ts"
import { toolNameOf } from "../UiChat.ts"
import { ChatSessionContext } from "../ChatSession.tsx"
import { ToolCard } from "./ToolCard.tsx"

/** The buttons of a pending approval: a decision is sent once; the transcript then shows what came of it. */
function ApprovalActions({ approvalId, name }: { readonly approvalId: string; readonly name: string }) {
  const session = useContext(ChatSessionContext)
  const [sent, setSent] = useState<"approved" | "denied" | undefined>(undefined)
  const [reason, setReason] = useState("")
  if (session === undefined) return null
  const decide = (approved: boolean) => {
    setSent(approved ? "approved" : "denied")
    void session.decide(approvalId, approved, approved ? undefined : reason.trim())
  }
  if (sent !== undefined) return <p className="tool-note">{sent === "approved" ? "Approved: it runs now." : "Denied."}</p>
  return (
    <div className="approval-actions">
      <button type="button" className="approve" onClick={() => decide(true)} aria-label={`Approve ${name}`}>Approve</button>
      <input
        type="text"
        className="approval-reason"
        placeholder="Reason (optional)"
        aria-label="Reason for denying"
        maxLength={1000}
        value={reason}
        onChange={(event) => setReason(event.target.value)}
      />
      <button type="button" className="deny" onClick={() => decide(false)} aria-label={`Deny ${name}`}>Deny</button>
    </div>
  )
}

export const ToolApprovalCard = memo(function ToolApprovalCard({ part }: { readonly part: ToolPart }) {
  const name = toolNameOf(part)
  const answered = part.state === "approval-responded" ? part.approval?.approved : undefined
  if (answered === false) {
    const reason = part.approval?.reason
    return (
      <ToolCard name={name} state="denied" label="Denied" input={part.input}>
        <p className="tool-note">{reason === undefined || reason === "" ? "Denied: it will not run." : `Denied: ${reason}`}</p>
      </ToolCard>
    )
  }
  if (answered === true) {
    return (
      <ToolCard name={name} state="waiting" label="Approved" input={part.input}>
        <p className="tool-note">Approved: it runs next.</p>
      </ToolCard>
    )
  }
  const approvalId = part.approval?.id
  return (
    <ToolCard name={name} state="approval" label="Awaiting approval" input={part.input}>
      <p className="tool-note">The agent asks to run <code>{name}</code> with this input. It waits for your decision.</p>
      {approvalId === undefined ? null : <ApprovalActions approvalId={approvalId} name={name} />}
    </ToolCard>
  )
})
