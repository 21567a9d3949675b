/** A tool call whose approval was denied (the AI SDK's `output-denied`): it did not run, and why. */
import { memo } from "react"
import type { ToolPart } from "../UiChat.ts"
import { toolNameOf } from "../UiChat.ts"
import { ToolCard } from "./ToolCard.tsx"

export const ToolDeniedCard = memo(function ToolDeniedCard({ part }: { readonly part: ToolPart }) {
  const reason = part.approval?.reason
  return (
    <ToolCard name={toolNameOf(part)} state="denied" label="Denied" input={part.input}>
      <p className="tool-note">{reason === undefined || reason === "" ? "Denied: it did not run." : `Denied: ${reason}`}</p>
    </ToolCard>
  )
})
