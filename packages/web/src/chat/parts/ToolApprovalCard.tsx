/**
 * A tool call that needs the user's approval before it runs (the AI SDK's `approval-requested`),
 * or whose approval was answered and which has not run yet (`approval-responded`): the tool and
 * the input it will run with, and where the approval stands. Read-only: the console does not
 * answer approvals yet (no server tool asks for one).
 */
import { memo } from "react"
import type { ToolPart } from "../UiChat.ts"
import { toolNameOf } from "../UiChat.ts"
import { ToolCard } from "./ToolCard.tsx"

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
  return answered === true
    ? (
      <ToolCard name={name} state="waiting" label="Approved" input={part.input}>
        <p className="tool-note">Approved: it runs next.</p>
      </ToolCard>
    )
    : (
      <ToolCard name={name} state="approval" label="Awaiting approval" input={part.input}>
        <p className="tool-note">The agent asks to run <code>{name}</code> with this input. It waits for approval.</p>
      </ToolCard>
    )
})
