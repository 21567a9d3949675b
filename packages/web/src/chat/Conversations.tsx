/**
 * The conversations this browser has had (the server has no list route for chats), most recent
 * first, each a link to `/chats/:chatId`; and "New chat", which starts one with a chosen agent.
 * The agents to choose from: the built-in one and those already used here — and, when this tab is
 * signed in as operator, every agent the server has (`GET /admin/agents`). Any name can be typed;
 * it is checked (`GET /api/agents/{name}`) before the chat starts. On a phone the list folds
 * behind a toggle.
 */
import { newChatId } from "@switchboard/client"
import { Effect } from "effect"
import type { FormEvent } from "react"
import { useEffect, useId, useState } from "react"
import { useStore } from "zustand"
import { makeConsoleApi } from "../api/ConsoleApi.ts"
import type { ConsoleApi } from "../api/ConsoleApi.ts"
import { sessionStore } from "../api/Session.ts"
import { Link, navigate } from "../app/Router.tsx"
import { conversationsStore } from "./ChatSession.tsx"

export const DEFAULT_AGENT = "media-editor"

const when = (timestamp: number) => {
  const date = new Date(timestamp)
  return date.toDateString() === new Date().toDateString()
    ? date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })
    : date.toLocaleDateString([], { month: "short", day: "numeric" })
}

/** Every agent's name, when this tab has the operator's token; none otherwise (and nothing is asked). */
const useOperatorAgents = (): ReadonlyArray<string> => {
  const adminToken = useStore(sessionStore, (state) => state.tokens.admin)
  const [names, setNames] = useState<ReadonlyArray<string>>([])
  useEffect(() => {
    if (adminToken === undefined) return
    const controller = new AbortController()
    // Not `api.run`: a refused token here must not bring up the operator's sign-in on the chat page.
    const admin = makeConsoleApi("admin", adminToken)
    Effect.runPromise(admin.client.agentsAdmin.list(), { signal: controller.signal }).then(
      ({ agents }) => setNames(agents.map((agent) => agent.name)),
      () => undefined
    )
    return () => controller.abort()
  }, [adminToken])
  return names
}

const NewChatForm = ({ api, onDone }: { readonly api: ConsoleApi; readonly onDone: () => void }) => {
  const id = useId()
  const used = useStore(conversationsStore, (state) => state.conversations)
  const operator = useOperatorAgents()
  const [agent, setAgent] = useState(DEFAULT_AGENT)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | undefined>(undefined)
  const known = [...new Set([DEFAULT_AGENT, ...operator, ...used.flatMap((c) => c.agent === undefined ? [] : [c.agent])])]

  const start = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const name = agent.trim()
    if (name === "") {
      setError("Choose an agent.")
      return
    }
    setBusy(true)
    setError(undefined)
    try {
      await api.run(api.client.agents.get({ params: { name } }))
      const chatId = newChatId()
      conversationsStore.getState().upsert({ chatId, agent: name, title: "New chat", updatedAt: Date.now() })
      onDone()
      navigate(`/chats/${encodeURIComponent(chatId)}`)
    } catch (failure) {
      const code = (failure as { readonly code?: unknown }).code
      setError(code === "agent_not_found" || code === "invalid_request" ? `No agent named "${name}".` : `The agent could not be checked.`)
    } finally {
      setBusy(false)
    }
  }

  return (
    <form className="new-chat" onSubmit={(event) => void start(event)} noValidate>
      <label htmlFor={`${id}-agent`}>Agent</label>
      <input
        id={`${id}-agent`}
        list={`${id}-agents`}
        value={agent}
        autoComplete="off"
        spellCheck={false}
        onChange={(event) => setAgent(event.target.value)}
        aria-invalid={error === undefined ? undefined : true}
        aria-describedby={error === undefined ? undefined : `${id}-error`}
      />
      <datalist id={`${id}-agents`}>
        {known.map((name) => <option key={name} value={name} />)}
      </datalist>
      {error === undefined ? null : <p id={`${id}-error`} className="form-error" role="alert">{error}</p>}
      <div className="inline">
        <button type="submit" disabled={busy}>{busy ? "Starting…" : "Start chat"}</button>
        <button type="button" className="secondary" onClick={onDone}>Cancel</button>
      </div>
    </form>
  )
}

export const Conversations = ({ api, current }: { readonly api: ConsoleApi; readonly current: string }) => {
  const id = useId()
  const conversations = useStore(conversationsStore, (state) => state.conversations)
  const [open, setOpen] = useState(false)
  const [creating, setCreating] = useState(false)
  const listed = conversations.some((c) => c.chatId === current) ? conversations : [{ chatId: current, title: "New chat", updatedAt: Date.now() }, ...conversations]

  return (
    <nav className="conversations panel" aria-labelledby={`${id}-title`} data-open={open ? "true" : undefined}>
      <div className="conversations-head">
        <h2 id={`${id}-title`} className="panel-title">Conversations</h2>
        <button
          type="button"
          className="secondary conversations-toggle"
          aria-expanded={open}
          aria-controls={`${id}-body`}
          onClick={() => setOpen(!open)}
        >
          {open ? "Hide" : `Show (${listed.length})`}
        </button>
      </div>
      <div id={`${id}-body`} className="conversations-body">
        {creating
          ? <NewChatForm api={api} onDone={() => setCreating(false)} />
          : <button type="button" className="new-chat-button" onClick={() => setCreating(true)}>New chat</button>}
        <ul className="conversation-list">
          {listed.map((conversation) => (
            <li key={conversation.chatId}>
              <Link
                to={`/chats/${encodeURIComponent(conversation.chatId)}`}
                aria-current={conversation.chatId === current ? "page" : undefined}
                onClick={() => setOpen(false)}
              >
                <span className="conversation-title">{conversation.title}</span>
                <span className="conversation-meta">
                  {conversation.agent ?? DEFAULT_AGENT} · {when(conversation.updatedAt)}
                </span>
              </Link>
            </li>
          ))}
        </ul>
      </div>
    </nav>
  )
}
