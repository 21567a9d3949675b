/**
 * A user's decision of a server tool call that waits for approval (docs/tools.md): sent, its
 * continuation followed — a turn of its own on the server, which any replica may run — and the
 * history re-synced from the stored transcript, the one place that knows what ran. The
 * orchestrator's `decide` (OrchestratorApi.ts).
 */
import type { ApprovalDecision, ChatMessage, PendingApproval, ToolCall, UiChunk } from "@switchboard/domain"
import { approvalResultId, approvalsOf, pendingApprovalsIn, unansweredToolCalls } from "@switchboard/domain"
import { Effect, Stream } from "effect"
import type { StoreApi } from "zustand/vanilla"
import type { AgentState } from "../stores/AgentStore.ts"
import type { ChatState, NewChatMessage } from "../stores/ChatStore.ts"
import { ChatTransport, ChatTransportError } from "./ChatTransport.ts"
import type { Orchestrator, RunResult } from "./OrchestratorApi.ts"
import { turnFailure } from "./OrchestratorApi.ts"

/** Polls of a chat with no turn running, 200 ms apart, before a decision's continuation counts as lost. */
const IDLE_POLLS = 100
const POLL_MS = 200

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** The calls an answer waits on, as the server stored them with its message: the calls, and `metadata.approvals`. */
export const askingFor = (waiting: ReadonlyArray<PendingApproval>): Pick<NewChatMessage, "toolCalls" | "metadata"> => ({
  toolCalls: waiting.map((p): ToolCall => ({ id: p.toolCallId, name: p.toolName, args: isObject(p.input) ? p.input as ToolCall["args"] : {} })),
  metadata: { approvals: Object.fromEntries(waiting.map((p) => [p.approvalId, p.toolCallId])) }
})

/** The calls of a history's last answer that are the client's to run: unanswered, and not waiting for an approval. */
export const clientCallsWaiting = (history: ReadonlyArray<ChatMessage>): ReadonlyArray<ToolCall> => {
  const last = history.at(-1)
  if (last?.role !== "assistant") return []
  const approvals = new Set(Object.values(approvalsOf(last)))
  return unansweredToolCalls(history).filter((c) => last.toolCalls?.includes(c) && !approvals.has(c.id))
}

/**
 * Whether the transcript shows a decision carried out: the call's answer stored, and after it the
 * model's answer — or, when other calls of the message still wait (a client's, another
 * approval's), the answer alone (the model is asked once they are answered).
 */
export const carriedOut = (transcript: ReadonlyArray<ChatMessage>, approvalId: string): boolean => {
  const at = transcript.findIndex((m) => m.id === approvalResultId(approvalId))
  if (at < 0) return false
  return transcript.slice(at + 1).some((m) => m.role === "assistant") || unansweredToolCalls(transcript).length > 0
}

export interface DecideDeps {
  readonly chatStore: StoreApi<ChatState>
  readonly agentStore: StoreApi<AgentState>
  readonly run: Orchestrator["run"]
  readonly onDelta?: ((delta: string, messageId: string) => void) | undefined
}

export const makeDecide = ({ agentStore, chatStore, onDelta, run }: DecideDeps): Orchestrator["decide"] => (approvalId, approved, reason) => {
  const chat = () => chatStore.getState()
  const agent = () => agentStore.getState()

  /** The chat's running turn followed to its end, its text shown as it streams; whether one ran. */
  const follow = (transport: ChatTransport["Service"], chatId: string) =>
    Effect.gen(function*() {
      let followed = false
      let shown = ""
      let draft: string | undefined
      yield* Stream.runForEach(transport.resume(chatId), (chunk: UiChunk) =>
        Effect.sync(() => {
          followed = true
          if (chunk.type === "start" && draft === undefined) {
            draft = chat().startStreaming({ id: chunk.messageId, role: "assistant", content: "", timestamp: Date.now() }).id
          } else if (chunk.type === "text-delta" && chunk.delta !== "") {
            shown += chunk.delta
            agent().setStatus("responding")
            chat().setStreamingContent(shown)
            onDelta?.(chunk.delta, draft ?? "")
          }
        })).pipe(Effect.ensuring(Effect.sync(() => {
          if (draft !== undefined && chat().streamingId === draft) chat().finishStreaming(null)
        })))
      return followed
    })

  return Effect.gen(function*() {
    const transport = yield* ChatTransport
    const chatId = chat().chatId
    chat().setError(null)
    chat().setLoading(true)
    agent().setStatus("sending")
    const decision: ApprovalDecision = { approved, ...(reason === undefined || reason === "" ? {} : { reason }) }
    yield* transport.decide(chatId, approvalId, decision)
    agent().setStatus("processing")
    // The continuation is followed while it runs; the transcript says when it has run (`carriedOut`).
    let idle = 0
    let transcript: ReadonlyArray<ChatMessage> = []
    for (;;) {
      const followed = yield* follow(transport, chatId)
      transcript = yield* transport.transcript(chatId)
      if (carriedOut(transcript, approvalId)) break
      if (followed) continue
      if (++idle >= IDLE_POLLS) {
        return yield* new ChatTransportError({ message: `the decision of ${approvalId} was taken, but its continuation has not ended yet: re-sync the chat later` })
      }
      yield* Effect.sleep(POLL_MS)
    }
    chat().replaceMessages(transcript)
    // The continuation's answer may ask for the client's tools: they run as a turn's do.
    if (clientCallsWaiting(transcript).length > 0) return yield* run()
    const message = transcript.findLast((m) => m.role === "assistant") ?? transcript.at(-1)!
    const pending = pendingApprovalsIn(transcript)
    agent().setStatus("idle")
    chat().setLoading(false)
    return { _tag: "Answered", message, iterations: 1, jobs: [], ...(pending.length === 0 ? {} : { pendingApprovals: pending }) } satisfies RunResult
  }).pipe(
    Effect.tapError((error) =>
      Effect.sync(() => {
        chat().setError(turnFailure(error))
        agent().setStatus("error")
      })
    ),
    Effect.ensuring(Effect.sync(() => {
      if (chat().loading) chat().setLoading(false)
    }))
  )
}
