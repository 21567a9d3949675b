/**
 * One message of the conversation, a UIMessage (`UiChat.ts`): laid out by its role — the user's on
 * the right with its time, the agent's answer with its time and whether it was stopped, a steer (a
 * sub-agent's result, user-role on the wire) as a result card, never as something the user said —
 * and its parts in order, each drawn by `MessagePart` (one component per part type). A run of
 * tool parts is one column of cards. Memoized on the message: while an answer streams only its
 * item renders.
 */
import type { UiMessage } from "@switchboard/domain"
import type { ReactNode } from "react"
import { memo } from "react"
import { MessagePart } from "./parts/MessagePart.tsx"
import { isStopped, isToolPart, partsOf, steerMarkerOf, timestampOf } from "./UiChat.ts"

const clock = (timestamp: number) => new Date(timestamp).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })

/** Whether a message is shown at all: a system message is not. */
export const isShown = (message: UiMessage): boolean => message.role === "user" || message.role === "assistant"

const Time = ({ timestamp }: { readonly timestamp: number }) => <time dateTime={new Date(timestamp).toISOString()}>{clock(timestamp)}</time>

/** The message's parts, each by its type; consecutive tool parts in one column (`.msg-tools`). */
const partViews = (message: UiMessage): Array<ReactNode> => {
  const shown: Array<ReactNode> = []
  let tools: Array<ReactNode> = []
  const endTools = () => {
    if (tools.length > 0) shown.push(<div className="msg-tools" key={`tools-${shown.length}`}>{tools}</div>)
    tools = []
  }
  partsOf(message).forEach((part, i) => {
    if (isToolPart(part)) {
      tools.push(<MessagePart key={part.toolCallId} message={message} part={part} />)
      return
    }
    endTools()
    shown.push(<MessagePart key={i} message={message} part={part} />)
  })
  endTools()
  return shown
}

const hasText = (message: UiMessage) => partsOf(message).some((part) => part.type === "text" && part.text !== "")

export const MessageItem = memo(function MessageItem({ message, streaming }: { readonly message: UiMessage; readonly streaming: boolean }) {
  const timestamp = timestampOf(message)
  if (steerMarkerOf(message) !== undefined) return <li className="msg msg-steer">{partViews(message)}</li>
  if (message.role === "user") {
    return (
      <li className="msg msg-user">
        <h2 className="visually-hidden">You said</h2>
        {partViews(message)}
        <p className="msg-meta"><Time timestamp={timestamp} /></p>
      </li>
    )
  }
  return (
    <li className="msg msg-assistant" data-streaming={streaming ? "true" : undefined} aria-busy={streaming || undefined}>
      <h2 className="visually-hidden">The agent answered</h2>
      {streaming && !hasText(message) ? <p className="msg-typing">…</p> : null}
      {partViews(message)}
      <p className="msg-meta">
        {isStopped(message) ? <span className="msg-stopped">Stopped</span> : null}
        <Time timestamp={timestamp} />
      </p>
    </li>
  )
})
