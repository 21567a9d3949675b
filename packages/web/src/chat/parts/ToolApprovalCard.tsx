/**
 * A tool call that needs the user's approval before it runs (the AI SDK's `approval-requested`),
 * or whose approval was answered and which has not run yet (`approval-responded`): the tool and
 * the input it will run with, and where the approval stands. On the chat page it asks: Approve,
 * or Deny with a reason — the decision goes to the server (`ChatSession.decide`), which runs the
 * tool once and continues the chat. The card comes from the transcript, so it survives a reload.
 * The pending card is `PendingApproval`, which a parked job's dispatch card draws too.
 */
import { memo, useContext } from "react"
import type { ToolPart } from "../UiChat.ts"
import { toolNameOf } from "../UiChat.ts"
import { ChatSessionContext } from "../ChatSession.tsx"
import { PendingApproval } from "./PendingApproval.tsx"
import type { DecideApproval } from "./PendingApproval.tsx"
import { ToolCard } from "./ToolCard.tsx"

export const ToolApprovalCard = memo(function ToolApprovalCard({ part }: { readonly part: ToolPart }) {
  const session = useContext(ChatSessionContext)
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
  // The orchestrator's `decide` follows the continuation; its errors go to the chat's banner.
  const decide: DecideApproval | undefined = session === undefined || approvalId === undefined
    ? undefined
    : (approved, reason) => {
      void session.decide(approvalId, approved, reason)
      return Promise.resolve(undefined)
    }
  return <PendingApproval key={approvalId} name={name} input={part.input} asker="The agent" decide={decide} />
})
