/**
 * A client tool call and its result (`output-available`), which the part carries: the result's
 * text (a string, an object's `text`, else the JSON), open under "Result".
 */
import { memo } from "react"
import type { ToolPart } from "../UiChat.ts"
import { toolNameOf } from "../UiChat.ts"
import { ToolCard } from "./ToolCard.tsx"

const outputText = (output: unknown): string | undefined => {
  if (output === undefined || output === null) return undefined
  if (typeof output === "string") return output
  const text = typeof output === "object" && !Array.isArray(output) ? (output as Record<string, unknown>)["text"] : undefined
  if (typeof text === "string") return text
  return JSON.stringify(output, null, 2)
}

export const ToolOutputCard = memo(function ToolOutputCard({ part }: { readonly part: ToolPart }) {
  const text = outputText(part.output)
  return (
    <ToolCard name={toolNameOf(part)} state="done" label="Done" input={part.input}>
      {text === undefined ? null : (
        <details className="tool-result" open>
          <summary>Result</summary>
          <pre tabIndex={0}>{text}</pre>
        </details>
      )}
    </ToolCard>
  )
})
