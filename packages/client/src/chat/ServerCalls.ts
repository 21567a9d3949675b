/**
 * A turn's calls that the server runs itself and that take a while — an agent's MCP tools,
 * `{server}__{tool}` (docs/tools.md) — as the orchestrator shows them: the call in the answer that
 * streams in, the agent `processing` with it as its active tool until its output arrives, and,
 * once the turn ends, the history re-synced from the transcript, where the calls and their results
 * are stored as the messages of their rounds. (A job's call is answered at once by its
 * acknowledgement, and followed apart: `JobWatch`; a turn that dispatched jobs re-syncs too, for
 * the calls it stored.)
 */
import type { UiChunk } from "@switchboard/domain"
import { MCP_TOOL_SEPARATOR } from "@switchboard/domain"
import type { StoreApi } from "zustand/vanilla"
import type { AgentState } from "../stores/AgentStore.ts"
import type { ChatState } from "../stores/ChatStore.ts"
import type { TurnProgress } from "./TurnChunks.ts"
import { responseOf } from "./TurnChunks.ts"

/** Whether a call is of a tool the server runs and the client never does. */
export const isServerRun = (toolName: string): boolean => toolName.includes(MCP_TOOL_SEPARATOR)

/**
 * Shows a chunk of a server-run call in the stores; true when one ran (the turn's end then
 * re-syncs). `shown`: the draft's text so far.
 */
export const showServerCall = (
  chunk: UiChunk,
  progress: TurnProgress,
  shown: string,
  stores: { readonly chat: StoreApi<ChatState>; readonly agent: StoreApi<AgentState> }
): boolean => {
  const agent = stores.agent.getState()
  switch (chunk.type) {
    case "tool-input-available": {
      if (!isServerRun(chunk.toolName)) return false
      // Every call of the round so far, as the draft's: the answered ones, this one, the waiting ones.
      const toolCalls = responseOf({ ...progress, outputs: new Map(), approvals: new Map() }).toolCalls ?? []
      stores.chat.getState().setStreamingContent(shown, toolCalls)
      agent.setStatus("processing")
      agent.setActiveTool(chunk.toolName)
      return false
    }
    case "tool-approval-request":
      // It waits for the user: it does not run.
      agent.setActiveTool(null)
      return false
    case "tool-output-available": {
      const call = progress.calls.find((c) => c.toolCallId === chunk.toolCallId)
      if (call === undefined || !isServerRun(call.toolName)) return false
      agent.setActiveTool(null)
      return true
    }
    default:
      return false
  }
}
