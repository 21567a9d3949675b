/**
 * The frame every client tool call's card shares, whatever its state: the tool's name, the state
 * in words (with a spinner while it is busy), the call's input, then what the state adds (the
 * result, the error, the approval). A group named "Tool <name>: <state>" for assistive technology.
 */
import type { ReactNode } from "react"

/** The card's look (`data-state`): its border colour and the state's colour. */
export type ToolCardState = "input" | "running" | "waiting" | "not-run" | "done" | "failed" | "approval" | "denied"

export interface ToolCardProps {
  readonly name: string
  readonly state: ToolCardState
  /** The state in words: "Running…", "Done", "Awaiting approval", … */
  readonly label: string
  readonly busy?: boolean | undefined
  /** The call's input (its arguments; a text the model gave instead of an object). */
  readonly input: unknown
  readonly children?: ReactNode
}

const inputText = (input: unknown): string | undefined => {
  if (input === undefined || input === null) return undefined
  if (typeof input === "string") return input === "" ? undefined : input
  if (typeof input === "object" && !Array.isArray(input)) {
    const entries = Object.entries(input)
    return entries.length === 0 ? undefined : entries.map(([key, value]) => `${key}: ${JSON.stringify(value)}`).join(", ")
  }
  return JSON.stringify(input)
}

export function ToolCard({ busy, children, input, label, name, state }: ToolCardProps) {
  const args = inputText(input)
  return (
    <div className="tool-card" data-state={state} role="group" aria-label={`Tool ${name}: ${label}`}>
      <div className="tool-card-head">
        <code className="tool-name">{name}</code>
        <span className="tool-state">{busy === true ? <span className="spinner" aria-hidden="true" /> : null}{label}</span>
      </div>
      {args === undefined ? null : <p className="tool-args"><code>{args}</code></p>}
      {children}
    </div>
  )
}
