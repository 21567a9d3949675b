/**
 * The chat (`/`, `/chats/:chatId`), in the first load: the conversations on the left, the
 * conversation in the middle (messages as they stream, the status line, the composer), the
 * sub-agents and the project context on the right; on a phone, one column, the list folded at the
 * top and the sidebar below the conversation. The state and the agent loop are the client
 * package's (`ChatStores.ts`, `ChatSession.tsx`); the sub-agents' views are the jobs views' (`JobViews.tsx`).
 *
 * `/` shows the conversation the chat store holds and moves to its `/chats/:chatId` once it has a
 * message, so a reload or a link comes back to it; opening `/chats/:chatId` puts that chat in the
 * store and re-syncs it from the server's transcript.
 */
import { useEffect, useMemo } from "react"
import { useStore } from "zustand"
import { useApi, useApiResult } from "../api/ConsoleApi.ts"
import { navigate } from "../app/Router.tsx"
import type { PageProps } from "../app/Router.tsx"
import { AgentJobKinds, JobsChatContext, JobsProvider, SubagentsPanel } from "../jobs/JobViews.tsx"
import type { JobsChatTarget } from "../jobs/JobViews.tsx"
import { ChatSessionContext, openConversation, resync, sessionFor } from "./ChatSession.tsx"
import { chatStore } from "./ChatStores.ts"
import { conversationsStore } from "./ConversationList.ts"
import { Composer, ErrorBanner, StatusLine } from "./Composer.tsx"
import { ContextEditor } from "./ContextEditor.tsx"
import { Conversations, DEFAULT_AGENT } from "./Conversations.tsx"
import { MessageList } from "./MessageList.tsx"
import "../styles/chat.css"
import "../styles/chat-parts.css"
import "../styles/chat-composer.css"

const CHAT_ID = /^[A-Za-z0-9_.:-]{1,128}$/

const NO_KINDS: ReadonlyArray<string> = []

export default function ChatPage({ params }: PageProps) {
  const api = useApi()
  const routeChatId = params["chatId"]
  const chatId = useStore(chatStore, (state) => state.chatId)
  const hasMessages = useStore(chatStore, (state) => state.messages.length > 0)
  const agent = useStore(conversationsStore, (state) => state.conversations.find((c) => c.chatId === (routeChatId ?? chatId))?.agent)
  const session = useMemo(() => sessionFor(api, agent), [api, agent])
  // The job watch re-syncs into this page's store, through its orchestrator, under its turns' lock.
  const jobsTarget = useMemo<JobsChatTarget>(
    () => ({ chatStore: session.chatStore, orchestrator: session.orchestrator, lock: session.lock }),
    [session]
  )
  const validRoute = routeChatId === undefined || CHAT_ID.test(routeChatId)

  // Opening a conversation: the route's into the store, then the server's transcript.
  useEffect(() => {
    if (!validRoute) return
    if (routeChatId === undefined) {
      if (chatStore.getState().messages.length > 0) void resync(session)
      return
    }
    void openConversation(session, routeChatId)
    // The session changes with the token: a new token re-syncs too.
  }, [routeChatId, session, validRoute])

  // `/` moves to the conversation's own address once it has one worth coming back to.
  useEffect(() => {
    if (routeChatId === undefined && hasMessages) navigate(`/chats/${encodeURIComponent(chatId)}`, { replace: true })
  }, [routeChatId, hasMessages, chatId])

  // The agent's public view: who the user talks to — and the call that brings up the sign-in when the server wants a token.
  const agentName = agent ?? DEFAULT_AGENT
  const info = useApiResult(api, (client) => client.agents.get({ params: { name: agentName } }), [agentName])
  // Its job kinds: a call of a kind of the operator's own is a dispatch card from its first chunk.
  const jobKinds = info.status === "success" ? info.value.jobKinds : NO_KINDS

  if (!validRoute) {
    return (
      <section className="page" aria-labelledby="page-title">
        <h1 id="page-title" tabIndex={-1}>Chat</h1>
        <p role="alert" className="form-error">"{routeChatId}" is not a chat id.</p>
      </section>
    )
  }

  return (
    <ChatSessionContext.Provider value={session}>
      <JobsChatContext value={jobsTarget}>
      <JobsProvider chatId={chatId} api={api}>
      <AgentJobKinds value={jobKinds}>
        <section className="chat-page" aria-labelledby="page-title">
          <div className="chat-head">
            <h1 id="page-title" tabIndex={-1}>Chat</h1>
            <p className="chat-agent status">
              {info.status === "loading"
                ? "Connecting…"
                : info.status === "success"
                ? <>Connected: agent {info.value.name}.{info.value.description === "" ? null : <span className="chat-agent-description"> {info.value.description}</span>}</>
                : `Not connected: ${info.failure.message}`}
            </p>
          </div>
          <div className="chat-layout">
            <Conversations api={api} current={chatId} />
            <div className="chat-main">
              <MessageList />
              <ErrorBanner />
              <StatusLine />
              <Composer />
            </div>
            <aside className="chat-sidebar" aria-label="Sub-agents and project context">
              <SubagentsPanel />
              <ContextEditor />
            </aside>
          </div>
        </section>
      </AgentJobKinds>
      </JobsProvider>
      </JobsChatContext>
    </ChatSessionContext.Provider>
  )
}
