/**
 * What the orchestrator (`Orchestrator.ts`) is to its callers: its
 * dependencies, its operations, how a turn ends, and its errors.
 */
import type { AgentContext, AgentName, ChatMessage, DispatchedJob, JsonObject, PendingApproval } from "@switchboard/domain"
import type { Effect } from "effect"
import type { StoreApi } from "zustand/vanilla"
import type { ApiFailure } from "../api/ApiFailure.ts"
import type { AgentState } from "../stores/AgentStore.ts"
import type { ChatState } from "../stores/ChatStore.ts"
import type { ToolRegistry } from "../tools/ToolRegistry.ts"
import type { AgentToolsMissing } from "./AgentToolsMissing.ts"
import type { ChatTransport, ChatTransportError } from "./ChatTransport.ts"

/** Hard cap on provider calls per turn (docs/chat.md: at most 8 rounds). */
export const maxIterations = 8

export const iterationLimitMessage = "Reached maximum iteration limit"

/** The error of a tool call a stopped turn did not run. */
export const notRunWhenStopped = "Not run: the user stopped the turn"

/**
 * How a turn ended without an API error. `Stopped`: `stop` was asked for, or
 * the server stopped the turn; `message` is the turn's last assistant message
 * (the partial answer, `metadata.stopped` set, when the server stopped it).
 */
export type RunResult =
  | {
    readonly _tag: "Answered"
    readonly message: ChatMessage
    readonly iterations: number
    readonly jobs: ReadonlyArray<DispatchedJob>
    /** Server tool calls the answer stopped at, waiting for the user's decision (`decide`). */
    readonly pendingApprovals?: ReadonlyArray<PendingApproval>
  }
  | { readonly _tag: "IterationLimit"; readonly message: ChatMessage; readonly iterations: number; readonly jobs: ReadonlyArray<DispatchedJob> }
  | { readonly _tag: "Stopped"; readonly message: ChatMessage; readonly iterations: number; readonly jobs: ReadonlyArray<DispatchedJob> }

/**
 * What a turn's agent knows of the session: the built-in media editor's
 * `AgentContext`, or any JSON object another agent's context schema describes.
 */
export type TurnContext = AgentContext | JsonObject

/** Why a turn stopped before the model answered. */
export type TurnError = ChatTransportError | AgentToolsMissing

/**
 * A turn's error as the chat store records it: its sentence, with the status, code, reason and
 * `retryAfter` when it has them (a 503 `overloaded`: `Switchboard is busy …; retry in 3 s`).
 */
export const turnFailure = (error: TurnError): ApiFailure => {
  if (error._tag === "AgentToolsMissing") return { message: error.message, code: error.code }
  const { code, message, reason, retryAfter, status } = error
  return {
    message,
    ...(status === undefined ? {} : { status }),
    ...(code === undefined ? {} : { code }),
    ...(reason === undefined ? {} : { reason }),
    ...(retryAfter === undefined ? {} : { retryAfter })
  }
}

export interface OrchestratorDeps {
  /** Persisted (`makeChatStore`) or not (`makeTransientChatStore`). */
  readonly chatStore: StoreApi<ChatState>
  readonly agentStore: StoreApi<AgentState>
  readonly registry: ToolRegistry
  /**
   * The agent every turn names (`agent` in the body); default: the chat's, or
   * the server's default agent. Before the first turn its client tools are
   * checked against `registry`.
   */
  readonly agent?: AgentName | undefined
  /** Whether answers stream in (`POST` with `Accept: text/event-stream`); default true. */
  readonly streaming?: boolean | undefined
  /** Hears each text delta of a streamed answer, with the id of the message it belongs to. */
  readonly onDelta?: ((delta: string, messageId: string) => void) | undefined
}

export interface Orchestrator {
  /**
   * Runs the loop over `messages` (default: `chatStore.messages`) with
   * `context` (default: `agentStore.context`). Fails with the transport error
   * after recording it in the stores, so a caller can both show it and set
   * an exit code.
   */
  readonly run: (
    messages?: ReadonlyArray<ChatMessage>,
    context?: TurnContext | null
  ) => Effect.Effect<RunResult, TurnError, ChatTransport>
  /**
   * Checks the agent's client tools against the registry (`GET /api/agents/{name}`), once: `run` and
   * `send` do it themselves, before anything else; a caller may do it first to refuse early.
   */
  readonly checkAgent: Effect.Effect<void, TurnError, ChatTransport>
  /** Appends a user message with `content` to `chatStore`, then runs over the stored history. */
  readonly send: (
    content: string,
    context?: TurnContext | null
  ) => Effect.Effect<RunResult, TurnError, ChatTransport>
  /**
   * Asks the running turn to stop: the server's turn is stopped (once; its
   * stream ends with the partial answer), no further tool runs and nothing
   * more is sent; `run` then ends with `Stopped`. Nothing when no turn runs.
   */
  readonly stop: Effect.Effect<void, never, ChatTransport>
  /**
   * Decides a server tool call that waits for approval (`RunResult.pendingApprovals`, or the
   * stored transcript's): the decision is sent, the continuation followed (its text heard by
   * `onDelta`) and the history re-synced from the transcript; client calls the continuation's
   * answer asks for are run as a turn's are. Fails with the server's 409 `approval_decided` when
   * it was decided already, 404 `approval_not_found` when the chat asks for no such approval.
   */
  readonly decide: (approvalId: string, approved: boolean, reason?: string) => Effect.Effect<RunResult, TurnError, ChatTransport>
}
