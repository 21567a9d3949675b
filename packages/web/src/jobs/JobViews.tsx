/**
 * The chat's views of its sub-agents (docs/console.md): the contract between the chat page, which
 * places them, and the jobs views, which draw them. The chat page renders
 *
 * - `<JobsProvider chatId api>` around the conversation: the one poll of `/api/jobs` (the client's
 *   job watch) feeding the client's jobs store, while the chat is open;
 * - `<DispatchCard call />` for an assistant tool call whose name is a job kind (`isJobKind`);
 * - `<SteerCard message />` for a message `subagentResultOf` marks as a steer — never as the
 *   user's own message;
 * - `<SubagentsPanel />` in the sidebar: the chat's jobs.
 *
 * Placeholder bodies for now; their props are final.
 */
import type { ChatMessage, ToolCall } from "@switchboard/domain"
import type { ReactNode } from "react"
import type { ConsoleApi } from "../api/ConsoleApi.ts"

export interface JobsProviderProps {
  readonly chatId: string | undefined
  readonly api: ConsoleApi
  readonly children: ReactNode
}

export function JobsProvider({ children }: JobsProviderProps) {
  return <>{children}</>
}

export interface DispatchCardProps {
  /** The job tool call as the transcript holds it (its `id` is the job's `toolCallId`). */
  readonly call: ToolCall
}

export function DispatchCard({ call }: DispatchCardProps) {
  return <div className="job-card">{call.name}</div>
}

export interface SteerCardProps {
  /** A steer message (`subagentResultOf(message)` is defined). */
  readonly message: ChatMessage
}

export function SteerCard({ message }: SteerCardProps) {
  return <div className="job-card">{message.content.slice(0, 80)}</div>
}

export function SubagentsPanel() {
  return null
}
