/** A client tool call that failed (`output-error`): the error the part carries. */
import { memo } from "react"
import type { ToolPart } from "../UiChat.ts"
import { toolNameOf } from "../UiChat.ts"
import { ToolCard } from "./ToolCard.tsx"

export const ToolErrorCard = memo(function ToolErrorCard({ part }: { readonly part: ToolPart }) {
  return (
    <ToolCard name={toolNameOf(part)} state="failed" label="Failed" input={part.input}>
      <p className="tool-error">{part.errorText === undefined || part.errorText === "" ? "The tool failed." : part.errorText}</p>
    </ToolCard>
  )
})
