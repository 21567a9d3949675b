/**
 * A client tool call of an assistant message, as a card: the tool, its arguments, its state —
 * running (the agent store's active tool), waiting (the turn has not reached it), done, failed,
 * not run — and its result or error, from the tool message that answers it.
 */
import type { ToolCall, ToolResult } from "@switchboard/domain"
import { memo } from "react"
import { useStore } from "zustand"
import { agentStore, chatStore } from "./ChatSession.tsx"

export type ToolCallState = "running" | "waiting" | "done" | "failed" | "not-run"

const LABELS: Record<ToolCallState, string> = {
  running: "Running…",
  waiting: "Waiting",
  done: "Done",
  failed: "Failed",
  "not-run": "Not run"
}

const resultText = (result: ToolResult): string => {
  const value = result.result
  if (typeof value === "string") return value
  const text = typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)["text"] : undefined
  if (typeof text === "string") return text
  return JSON.stringify(value, null, 2) ?? ""
}

const argsText = (call: ToolCall): string | undefined => {
  if (call.invalidArgs !== undefined) return call.invalidArgs
  const entries = Object.entries(call.args)
  return entries.length === 0 ? undefined : entries.map(([key, value]) => `${key}: ${JSON.stringify(value)}`).join(", ")
}

export const ToolCallCard = memo(function ToolCallCard({ call }: { readonly call: ToolCall }) {
  const result = useStore(chatStore, (state) => state.messages.findLast((m) => m.toolResult?.toolCallId === call.id)?.toolResult)
  const loading = useStore(chatStore, (state) => state.loading)
  const activeTool = useStore(agentStore, (state) => state.activeTool)
  const state: ToolCallState = result !== undefined
    ? (result.error !== undefined ? "failed" : "done")
    : loading
    ? (activeTool === call.name ? "running" : "waiting")
    : "not-run"
  const args = argsText(call)
  return (
    <div className="tool-card" data-state={state} role="group" aria-label={`Tool ${call.name}: ${LABELS[state]}`}>
      <div className="tool-card-head">
        <code className="tool-name">{call.name}</code>
        <span className="tool-state">{state === "running" ? <span className="spinner" aria-hidden="true" /> : null}{LABELS[state]}</span>
      </div>
      {args === undefined ? null : <p className="tool-args"><code>{args}</code></p>}
      {result?.error !== undefined
        ? <p className="tool-error">{result.error}</p>
        : result !== undefined
        ? (
          <details className="tool-result" open>
            <summary>Result</summary>
            <pre tabIndex={0}>{resultText(result)}</pre>
          </details>
        )
        : null}
    </div>
  )
})
