/**
 * One message of the conversation, by role: the user's text; the assistant's markdown and its tool
 * calls (a job's as the jobs views' dispatch card, a client tool's as a `ToolCallCard`); a steer —
 * a sub-agent's result, stored as a user-role message — as the jobs views' result card, never as
 * something the user said. Tool and system messages are not shown on their own: a tool's result
 * is in its call's card. Memoized on the message: while an answer streams only its item renders.
 */
import type { ChatMessage } from "@switchboard/domain"
import { isJobKind, subagentResultOf } from "@switchboard/domain"
import { memo } from "react"
import { DispatchCard, SteerCard } from "../jobs/JobViews.tsx"
import { Markdown } from "./Markdown.tsx"
import { ToolCallCard } from "./ToolCallCard.tsx"

const time = (timestamp: number) => new Date(timestamp).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })

/** Whether a message is shown at all. */
export const isShown = (message: ChatMessage): boolean => message.role === "user" || message.role === "assistant"

export const MessageItem = memo(function MessageItem({ message, streaming }: { readonly message: ChatMessage; readonly streaming: boolean }) {
  if (subagentResultOf(message) !== undefined) {
    return <li className="msg msg-steer"><SteerCard message={message} /></li>
  }
  if (message.role === "user") {
    return (
      <li className="msg msg-user">
        <h2 className="visually-hidden">You said</h2>
        <div className="msg-bubble">{message.content}</div>
        <p className="msg-meta"><time dateTime={new Date(message.timestamp).toISOString()}>{time(message.timestamp)}</time></p>
      </li>
    )
  }
  const stopped = message.metadata?.["stopped"] === true
  const calls = message.toolCalls ?? []
  return (
    <li className="msg msg-assistant" data-streaming={streaming ? "true" : undefined} aria-busy={streaming || undefined}>
      <h2 className="visually-hidden">The agent answered</h2>
      {message.content === "" && streaming ? <p className="msg-typing">…</p> : null}
      {message.content === "" ? null : <Markdown text={message.content} />}
      {calls.length === 0 ? null : (
        <div className="msg-tools">
          {calls.map((call) => isJobKind(call.name) ? <DispatchCard key={call.id} call={call} /> : <ToolCallCard key={call.id} call={call} />)}
        </div>
      )}
      <p className="msg-meta">
        {stopped ? <span className="msg-stopped">Stopped</span> : null}
        <time dateTime={new Date(message.timestamp).toISOString()}>{time(message.timestamp)}</time>
      </p>
    </li>
  )
})
