/**
 * A client tool call without its result yet (`input-streaming`, `input-available`): its input
 * arriving ("Preparing…"), or the call running (the turn runs this tool now), waiting (the turn
 * has not reached it) or not run (no turn runs: it never will be).
 */
import { memo, useContext } from "react"
import type { ToolPart } from "../UiChat.ts"
import { toolNameOf } from "../UiChat.ts"
import { ToolCard } from "./ToolCard.tsx"
import { TurnActivityContext } from "./TurnActivity.ts"

export const ToolInputCard = memo(function ToolInputCard({ part }: { readonly part: ToolPart }) {
  const { activeTool, running } = useContext(TurnActivityContext)
  const name = toolNameOf(part)
  if (part.state === "input-streaming") return <ToolCard name={name} state="input" label="Preparing…" busy input={part.input} />
  if (!running) return <ToolCard name={name} state="not-run" label="Not run" input={part.input} />
  return activeTool === name
    ? <ToolCard name={name} state="running" label="Running…" busy input={part.input} />
    : <ToolCard name={name} state="waiting" label="Waiting" input={part.input} />
})
