/**
 * The conversation — the chat's UIMessages (`uiChatStore`), one `MessageItem` each — scrolled in
 * its own region. New text keeps the view at the bottom only when
 * the reader is already there: someone who scrolled up to read stays where they are while an
 * answer streams. The region is keyboard-scrollable (it takes focus) and labelled.
 */
import { useEffect, useLayoutEffect, useMemo, useRef } from "react"
import { useStore } from "zustand"
import { agentStore, chatStore, uiChatStore } from "./ChatStores.ts"
import { isShown, MessageItem } from "./MessageItem.tsx"
import type { TurnActivity } from "./parts/TurnActivity.ts"
import { TurnActivityContext } from "./parts/TurnActivity.ts"

/** Within this many pixels of the end counts as at the bottom. */
const BOTTOM_SLACK = 32

export const MessageList = () => {
  const messages = useStore(uiChatStore, (state) => state.messages)
  const streamingId = useStore(uiChatStore, (state) => state.streamingId)
  const chatId = useStore(uiChatStore, (state) => state.chatId)
  // What the cards of calls still without a result show: running, waiting, not run.
  const running = useStore(chatStore, (state) => state.loading)
  const activeTool = useStore(agentStore, (state) => state.activeTool)
  const activity = useMemo<TurnActivity>(() => ({ running, activeTool }), [running, activeTool])
  const scroller = useRef<HTMLDivElement>(null)
  const atBottom = useRef(true)

  // A new conversation starts at its end.
  useLayoutEffect(() => {
    atBottom.current = true
  }, [chatId])

  useLayoutEffect(() => {
    const element = scroller.current
    if (element !== null && atBottom.current) element.scrollTop = element.scrollHeight
  }, [messages])

  const shown = messages.filter(isShown)
  const empty = shown.length === 0

  // The region or its content changes size (a narrower window, a card that opens): still at the bottom if it was.
  useEffect(() => {
    const element = scroller.current
    if (element === null || typeof ResizeObserver === "undefined") return
    const observer = new ResizeObserver(() => {
      if (atBottom.current) element.scrollTop = element.scrollHeight
    })
    observer.observe(element)
    if (element.firstElementChild !== null) observer.observe(element.firstElementChild)
    return () => observer.disconnect()
  }, [empty])
  return (
    <div
      ref={scroller}
      className="chat-log"
      tabIndex={0}
      role="region"
      aria-label="Conversation"
      onScroll={(event) => {
        const element = event.currentTarget
        atBottom.current = element.scrollHeight - element.scrollTop - element.clientHeight <= BOTTOM_SLACK
      }}
    >
      {empty
        ? (
          <div className="chat-empty">
            <p>No messages yet.</p>
            <p>Ask the agent something below. Add a video in the project context and ask for a transcription: the browser uploads the file when the agent calls <code>transcribe_video</code>.</p>
          </div>
        )
        : (
          <TurnActivityContext value={activity}>
            <ol className="messages">
              {shown.map((message) => <MessageItem key={message.id} message={message} streaming={message.id === streamingId} />)}
            </ol>
          </TurnActivityContext>
        )}
    </div>
  )
}
