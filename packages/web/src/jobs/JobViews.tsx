/**
 * The chat's views of its sub-agents (docs/console-subagents.md): the contract
 * between the chat page, which places them, and the jobs views, which draw them. The chat page
 * renders
 *
 * - `<JobsProvider chatId api>` around the conversation: the one poll of `/api/jobs` — the client
 *   package's job watch, the CLI's own — feeding the client's jobs store, while the chat is open;
 *   it stops when the chat closes or `chatId` changes;
 * - `<DispatchCard toolCallId kind input />` for an assistant's tool part that is a job's call
 *   (`useIsJobCall`: a built-in kind's, or a defined kind's the server acknowledged, the jobs list,
 *   or the chat's agent names — the page gives its agent's `jobKinds` as `<AgentJobKinds value>`);
 *   a job parked on a call that needs the user's approval asks for it there;
 * - `<SteerCard messageId marker artifact text />` for a steer's `data-subagent-artifact` part (or,
 *   for a steer without a valid one, its text) — a message `subagentResultOf` marks as a steer,
 *   never shown as the user's own message;
 * - `<SubagentsPanel />` in the sidebar: the chat's jobs.
 *
 * **What the chat page provides: `JobsChatContext`.** The job watch does for the browser what it
 * does for `switchboard chat`: when a job settles (its steer delivered and the wake turn
 * answered), it re-syncs the transcript (`GET /api/chats/{chatId}/messages`) into the chat
 * store with `replaceMessages`, so the steer and the wake answer simply appear in the store the
 * page renders from — once each, whatever the page did meanwhile — and a wake answer that asks
 * for client tools is resumed by the page's orchestrator. For that the page gives its own:
 *
 * ```tsx
 * const lock = useMemo(() => Semaphore.makeUnsafe(1), [])  // or Effect.runSync(Semaphore.make(1))
 * <JobsChatContext value={{ chatStore, orchestrator, lock }}>
 *   <JobsProvider chatId={chatId} api={api}>…</JobsProvider>
 * </JobsChatContext>
 * ```
 *
 * and runs each turn (send, stop-and-resume, the continuation after a client tool) under
 * `lock.withPermits(1)`, as the CLI does: a re-sync then waits for the turn's end instead of
 * replacing the messages while an answer streams in. Only the chat whose id is `chatId` is polled
 * (the store's `chatId` must be it). Without `JobsChatContext` nothing is polled.
 *
 * **Events, if the page wants them.** Inside the provider, `useJobEvents((event) => …)` hears the
 * watch's events: `dispatched`, `activity`, `waiting`, `settled`, then `steer` and `answer` (each message
 * once, after the re-sync put it in the store: e.g. to scroll to it or announce it), and
 * `pollFailed`. Nothing needs them for the steer to show.
 *
 * New jobs are found by the poll itself (every 2 s while none runs, every 300 ms while one does,
 * and at once when a `DispatchCard` mounts for a job not listed yet): the page need not tell the
 * provider what its turns dispatched.
 */
import "../styles/jobs.css"

export { DispatchCard, dispatchCardId } from "./DispatchCard.tsx"
export type { DispatchCardProps } from "./DispatchCard.tsx"
export { AgentJobKinds, isJobAcknowledgement, useIsJobCall } from "./JobCalls.ts"
export type { ToolCallView } from "./JobCalls.ts"
export { JobsChatContext, JobsProvider, useJobEvents } from "./JobsContext.tsx"
export type { JobEventListener, JobsChatTarget, JobsProviderProps } from "./JobsContext.tsx"
export { SteerCard } from "./SteerCard.tsx"
export type { SteerCardProps } from "./SteerCard.tsx"
export { SubagentsPanel } from "./SubagentsPanel.tsx"
