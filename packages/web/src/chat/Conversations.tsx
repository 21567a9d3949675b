/**
 * The user's conversations, most recently active first, each a link to `/chats/:chatId` with a
 * Delete beside it; and "New chat", which starts one with a chosen agent. The list is the
 * server's (`GET /api/chats`, a page at a time: "Show older" follows `nextBefore`), so a second
 * browser of the same user lists the same chats; it is loaded when the page opens, after each
 * turn, and when the tab comes back into view. Until it answers — or when it cannot — the list
 * this browser kept is shown (`conversationsStore`), with the drafts the server does not have yet.
 * Delete is `DELETE /api/chats/{chatId}`, asked to be confirmed in the row.
 *
 * The agents to choose from: the built-in one and those already used here — and, when this tab is
 * signed in as operator, every agent the server has (`GET /admin/agents`). Any name can be typed;
 * it is checked (`GET /api/agents/{name}`) before the chat starts. On a phone the list folds
 * behind a toggle.
 */
import { describeApiFailure, newChatId } from "@switchboard/client"
import { Effect } from "effect"
import type { FormEvent } from "react"
import { useCallback, useEffect, useId, useRef, useState } from "react"
import { useStore } from "zustand"
import { makeConsoleApi } from "../api/ConsoleApi.ts"
import type { ConsoleApi } from "../api/ConsoleApi.ts"
import { ownerOf, sessionStore } from "../api/Session.ts"
import { Link, navigate } from "../app/Router.tsx"
import { useChatSession } from "./ChatSession.tsx"
import { chatStore } from "./ChatStores.ts"
import type { Conversation } from "./ConversationList.ts"
import { adoptOwner, conversationsStore } from "./ConversationList.ts"

export const DEFAULT_AGENT = "media-editor"

/** Chats a page of the list asks for; a refresh asks for as many as are shown (up to the server's 200). */
const PAGE = 30
const MAX_PAGE = 200

const when = (timestamp: number) => {
  const date = new Date(timestamp)
  return date.toDateString() === new Date().toDateString()
    ? date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })
    : date.toLocaleDateString([], { month: "short", day: "numeric" })
}

const codeOf = (failure: unknown) => (failure as { readonly code?: unknown } | null)?.code

const describe = (failure: unknown) => Effect.runSync(describeApiFailure(failure)).message

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

interface ServerList {
  /** `loading` until the first answer; `failed`: the last load failed (the kept list is shown). */
  readonly status: "loading" | "ready" | "failed"
  /** The cursor of the next older page; none: every chat is listed. */
  readonly nextBefore?: string | undefined
  readonly failure?: string | undefined
  readonly loadingMore: boolean
}

/**
 * The server's list into `conversationsStore`: loaded with `api` (its token), again after each turn
 * (the chat store's `loading` going back to false), when the tab is shown again, and on `refresh()`;
 * `more()` appends the next older page. Answers that arrive after a newer request are dropped.
 */
const useServerList = (api: ConsoleApi) => {
  const [list, setList] = useState<ServerList>({ status: "loading", loadingMore: false })
  const shown = useRef(PAGE)
  const round = useRef(0)
  const nextBefore = useRef<string | undefined>(undefined)

  /** One page: the newest ones in place of the list's (`replace`), or the next older ones after it (`append`). */
  const load = useCallback(async (mode: "replace" | "append") => {
    const before = nextBefore.current
    if (mode === "append" && before === undefined) return
    const mine = ++round.current
    if (mode === "append") setList((state) => ({ ...state, loadingMore: true }))
    const query = mode === "replace"
      ? { limit: Math.min(MAX_PAGE, Math.max(PAGE, shown.current)) }
      : { limit: PAGE, ...(before === undefined ? {} : { before }) }
    try {
      const page = await api.run(api.client.chat.list({ query }))
      if (mine !== round.current) return
      // The answer is the token's user's: the caches are theirs.
      if (mode === "replace") adoptOwner(ownerOf(typeof api.options.token === "string" ? api.options.token : undefined))
      conversationsStore.getState().fromServer(page.chats, mode)
      shown.current = (mode === "replace" ? 0 : shown.current) + page.chats.length
      nextBefore.current = page.nextBefore
      setList({ status: "ready", nextBefore: page.nextBefore, loadingMore: false })
    } catch (failure) {
      if (mine !== round.current) return
      setList((state) => ({ ...state, status: "failed", failure: describe(failure), loadingMore: false }))
    }
  }, [api])
  const refresh = useCallback(() => load("replace"), [load])
  const more = useCallback(() => load("append"), [load])

  useEffect(() => {
    void refresh()
    // After each turn (its chat is listed, or moves to the top), and when the tab is back in view.
    const afterTurn = chatStore.subscribe((state, before) => {
      if (before.loading && !state.loading) void refresh()
    })
    const onVisible = () => {
      if (document.visibilityState === "visible") void refresh()
    }
    document.addEventListener("visibilitychange", onVisible)
    window.addEventListener("focus", onVisible)
    return () => {
      round.current++
      afterTurn()
      document.removeEventListener("visibilitychange", onVisible)
      window.removeEventListener("focus", onVisible)
    }
  }, [refresh])

  return { list, refresh, more }
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
      const code = codeOf(failure)
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

/** One conversation: its link, and Delete — confirmed in the row before anything is sent. */
const ConversationRow = ({ conversation, current, onOpen, onDelete }: {
  readonly conversation: Conversation
  readonly current: boolean
  readonly onOpen: () => void
  readonly onDelete: (chatId: string) => Promise<string | undefined>
}) => {
  const id = useId()
  const [confirming, setConfirming] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | undefined>(undefined)
  const keep = useRef<HTMLButtonElement>(null)
  const ask = useRef<HTMLButtonElement>(null)

  // The focus follows the question: to "Keep" when asked, back to the row's Delete when kept.
  const asked = useRef(false)
  useEffect(() => {
    if (confirming) {
      asked.current = true
      keep.current?.focus()
    } else if (asked.current) {
      asked.current = false
      ask.current?.focus()
    }
  }, [confirming])

  const confirm = async () => {
    setBusy(true)
    setError(undefined)
    const failure = await onDelete(conversation.chatId)
    // Deleted: this row is gone with it. Not: it stays, saying why.
    if (failure !== undefined) {
      setBusy(false)
      setError(failure)
    }
  }

  return (
    <li className="conversation" data-confirming={confirming ? "true" : undefined}>
      <Link
        to={`/chats/${encodeURIComponent(conversation.chatId)}`}
        aria-current={current ? "page" : undefined}
        onClick={onOpen}
      >
        <span className="conversation-title" id={`${id}-title`}>{conversation.title}</span>
        <span className="conversation-meta">
          {conversation.agent ?? DEFAULT_AGENT} · {when(conversation.updatedAt)}
        </span>
      </Link>
      {confirming
        ? (
          <div className="conversation-confirm" role="group" aria-labelledby={`${id}-ask`}>
            <span id={`${id}-ask`}>Delete this chat for good?</span>
            <div className="inline">
              <button type="button" className="danger" disabled={busy} onClick={() => void confirm()} aria-describedby={`${id}-title`}>
                {busy ? "Deleting…" : "Delete"}
              </button>
              <button
                type="button"
                className="secondary"
                ref={keep}
                disabled={busy}
                onClick={() => {
                  setConfirming(false)
                  setError(undefined)
                }}
              >
                Keep
              </button>
            </div>
            {error === undefined ? null : <p className="form-error" role="alert">{error}</p>}
          </div>
        )
        : (
          <button
            type="button"
            ref={ask}
            className="secondary conversation-delete"
            aria-label="Delete"
            aria-describedby={`${id}-title`}
            title="Delete this chat"
            onClick={() => setConfirming(true)}
          >
            <span aria-hidden="true">×</span>
          </button>
        )}
    </li>
  )
}

export const Conversations = ({ api, current }: { readonly api: ConsoleApi; readonly current: string }) => {
  const id = useId()
  const session = useChatSession()
  const conversations = useStore(conversationsStore, (state) => state.conversations)
  const [open, setOpen] = useState(false)
  const [creating, setCreating] = useState(false)
  const { list, more, refresh } = useServerList(api)
  const listed = conversations.some((c) => c.chatId === current) ? conversations : [{ chatId: current, title: "New chat", updatedAt: Date.now() }, ...conversations]

  /** Deletes a chat on the server (one it never had is gone already); undefined when done, else why not. */
  const remove = async (chatId: string): Promise<string | undefined> => {
    try {
      await api.run(api.client.chat.remove({ params: { chatId } }))
    } catch (failure) {
      if (codeOf(failure) !== "chat_not_found") return `Not deleted: ${describe(failure)}`
    }
    conversationsStore.getState().remove(chatId)
    if (chatStore.getState().chatId === chatId) {
      // The conversation in view: its turn stops, and the page moves to a new one.
      await session.stop()
      chatStore.getState().clearMessages()
      navigate("/", { replace: true })
    }
    void refresh()
    return undefined
  }

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
        <ul className="conversation-list" aria-busy={list.status === "loading" ? true : undefined}>
          {listed.map((conversation) => (
            <ConversationRow
              key={conversation.chatId}
              conversation={conversation}
              current={conversation.chatId === current}
              onOpen={() => setOpen(false)}
              onDelete={remove}
            />
          ))}
        </ul>
        {list.status === "failed"
          ? <p className="muted conversations-note" role="status">The server's list could not be loaded ({list.failure}); showing this browser's copy.</p>
          : null}
        {list.nextBefore === undefined ? null : (
          <button type="button" className="secondary conversations-more" disabled={list.loadingMore} onClick={() => void more()}>
            {list.loadingMore ? "Loading…" : "Show older"}
          </button>
        )}
      </div>
    </nav>
  )
}
