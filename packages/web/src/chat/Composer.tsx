/**
 * Where the user writes: Enter sends, Shift+Enter starts a new line. Never waits on the
 * sub-agents' jobs; while the agent's own turn streams, Stop takes Send's place (the text being
 * written stays). Above it, the agent store's status line, and the chat store's error with Retry
 * (a busy server's 503 `overloaded` as "Busy — retry in 3 s": `TurnFailure.ts`).
 */
import type { FormEvent, KeyboardEvent } from "react"
import { useId, useState } from "react"
import { isOverloaded } from "@switchboard/client"
import { useStore } from "zustand"
import { useChatSession } from "./ChatSession.tsx"
import { agentStore, chatStore } from "./ChatStores.ts"
import { turnFailureText } from "./TurnFailure.ts"

const statusText = (status: string, activeTool: string | null, busy: boolean): string => {
  switch (status) {
    case "sending":
      return "Sending…"
    case "processing":
      return activeTool === null ? "Running tools…" : `Running ${activeTool}…`
    case "responding":
      return "Responding…"
    case "error":
      return busy ? "Busy: the turn was not started." : "The turn failed."
    default:
      return "Ready."
  }
}

export const StatusLine = () => {
  const status = useStore(agentStore, (state) => state.status)
  const activeTool = useStore(agentStore, (state) => state.activeTool)
  const loading = useStore(chatStore, (state) => state.loading)
  const busy = useStore(chatStore, (state) => state.failure !== null && isOverloaded(state.failure))
  const shown = loading && status === "idle" ? "sending" : status
  return (
    <p className="chat-status" role="status" data-status={shown} data-tool={activeTool ?? undefined}>
      {shown === "idle" || shown === "error" ? null : <span className="spinner" aria-hidden="true" />}
      {statusText(shown, activeTool, busy)}
    </p>
  )
}

export const ErrorBanner = () => {
  const session = useChatSession()
  const error = useStore(chatStore, (state) => state.error)
  const failure = useStore(chatStore, (state) => state.failure)
  const loading = useStore(chatStore, (state) => state.loading)
  if (error === null) return null
  const text = turnFailureText(failure ?? { message: error })
  return (
    <div className="chat-error" role="alert" data-busy={text.busy ? "" : undefined}>
      <p><strong>{text.title}</strong> {text.detail}</p>
      <div className="chat-error-actions">
        <button type="button" disabled={loading} onClick={() => void session.retry()}>Retry</button>
        <button type="button" className="secondary" onClick={() => chatStore.getState().setError(null)}>Dismiss</button>
      </div>
    </div>
  )
}

export const Composer = () => {
  const session = useChatSession()
  const id = useId()
  const loading = useStore(chatStore, (state) => state.loading)
  const [text, setText] = useState("")

  const send = () => {
    const message = text.trim()
    if (message === "" || chatStore.getState().loading) return
    setText("")
    void session.send(message)
  }
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    send()
  }
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key !== "Enter" || event.shiftKey || event.nativeEvent.isComposing) return
    event.preventDefault()
    send()
  }

  return (
    <form className="composer" onSubmit={onSubmit} noValidate>
      <label htmlFor={`${id}-message`} className="visually-hidden">Message</label>
      <textarea
        id={`${id}-message`}
        name="message"
        rows={2}
        value={text}
        placeholder="Message the agent"
        onChange={(event) => setText(event.target.value)}
        onKeyDown={onKeyDown}
        aria-describedby={`${id}-hint`}
      />
      <p id={`${id}-hint`} className="visually-hidden">Enter sends; Shift+Enter starts a new line.</p>
      {loading
        ? <button type="button" className="stop" onClick={() => void session.stop()}>Stop</button>
        : <button type="submit" disabled={text.trim() === ""}>Send</button>}
    </form>
  )
}
