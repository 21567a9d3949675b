/**
 * Which tool call of a chat is a job's — drawn as its dispatch card rather than as a client tool's
 * card. A built-in kind's call always is. Any other kind is an operator's (docs/subagents.md), so
 * its name alone says nothing: the call is a job's when the server acknowledged it as one (its
 * output is `jobAcknowledgement`'s `{ status: "dispatched", jobId, kind }`), when the chat's jobs
 * list a job of that call, or — while the turn still streams it, before the acknowledgement — when
 * the chat's agent names the kind among its `jobKinds` (`AgentJobKinds`, which the chat page gives).
 */
import { isJobKind } from "@switchboard/domain"
import { jobOfToolCall } from "@switchboard/client"
import { createContext, useContext } from "react"
import { useStore } from "zustand"
import { useJobsContext } from "./JobsContext.tsx"

/** The job kinds of the chat's agent (`AgentInfo.jobKinds`), given by the chat page; none outside it. */
export const AgentJobKinds = createContext<ReadonlyArray<string>>([])

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Whether a tool call's output is the server's acknowledgement of a job of `kind`. */
export const isJobAcknowledgement = (output: unknown, kind: string): boolean =>
  isObject(output) && output["status"] === "dispatched" && typeof output["jobId"] === "string" && output["kind"] === kind

export interface ToolCallView {
  /** The tool's name: a job's kind. */
  readonly name: string
  readonly toolCallId: string
  /** The tool part's state (`input-streaming`, `output-available`, …). */
  readonly state: string
  readonly output?: unknown
}

/** Whether the call is a job's (see above): its dispatch card then shows it, in every state. */
export const useIsJobCall = ({ name, output, state, toolCallId }: ToolCallView): boolean => {
  const agentKinds = useContext(AgentJobKinds)
  const { store } = useJobsContext()
  const listed = useStore(store, (jobs) => jobOfToolCall(jobs, toolCallId)?.kind === name)
  if (isJobKind(name) || listed || isJobAcknowledgement(output, name)) return true
  // Not answered yet: the agent's kinds say what it will be. Answered otherwise (an error): not a job.
  return agentKinds.includes(name) && (state === "input-streaming" || state === "input-available")
}
