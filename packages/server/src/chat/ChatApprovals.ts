/**
 * The port through which chat meets approvals (approvals/, docs/tools.md): calls of server tools
 * that wait for a user's decision. Chat defines it — its routes take the decisions, its client
 * turns find calls still waiting — and the approvals feature implements it. Without one no call
 * ever waits, and a decision finds no approval (404).
 */
import type { ApprovalDecision, ChatMessage, UiApprovalResponse } from "@switchboard/domain"
import { ApprovalNotFound } from "@switchboard/domain"
import type { ApprovalDecided, ChatNotFound, TurnInFlight } from "@switchboard/domain"
import { Context, Effect } from "effect"
import type { ProviderError } from "@switchboard/providers"
import type { ChatKey } from "../users/ChatKey.ts"
import type { LiveTurn } from "./stream/LiveTurn.ts"
import type { Resume } from "./turn/TurnTypes.ts"

export interface ChatApprovalsShape {
  /**
   * What answers the approvals a client's turn of `chatId` finds waiting — the user wrote again
   * instead of deciding: they are denied, before its provider call; `undefined`: none can wait.
   */
  readonly supersede: ((chatId: ChatKey) => Resume) | undefined
  /**
   * Records the decision (at most one per approval, on every replica) and starts the chat's
   * continuation in the background, on this replica (any other takes it over if this one dies).
   */
  decide(chatId: ChatKey, approvalId: string, decision: ApprovalDecision): Effect.Effect<void, ApprovalNotFound | ApprovalDecided | ChatNotFound>
  /**
   * The decisions a `useChat` request carries (`approval-responded` parts), recorded — those
   * decided already are left as they were — and the continuation to run on the request's stream,
   * storing `messages` first (the request's new ones: the client's results of the same round);
   * `"jobs"` when it decided only calls that sub-agent jobs wait on (they go on in the background:
   * nothing to stream); `undefined` when the request carries none this chat waits for.
   */
  responded(
    chatId: ChatKey,
    responses: ReadonlyArray<UiApprovalResponse>,
    messages: ReadonlyArray<ChatMessage>
  ): Effect.Effect<((live: LiveTurn) => Effect.Effect<unknown, TurnInFlight | ProviderError>) | "jobs" | undefined>
}

/** Whether a message claims what only the server writes of approvals: a request may send back only what is stored. */
export const claimsApproval = (message: ChatMessage): boolean =>
  message.id.startsWith("approval_") ||
  message.metadata?.["approvals"] !== undefined ||
  message.metadata?.["approval"] !== undefined

const noApprovals: ChatApprovalsShape = {
  supersede: undefined,
  decide: (_chatId, approvalId) =>
    Effect.fail(new ApprovalNotFound({ error: `No approval "${approvalId}" is asked for in this chat`, approvalId })),
  responded: () => Effect.succeed(undefined)
}

export const ChatApprovals = Context.Reference<ChatApprovalsShape>("switchboard/server/chat/ChatApprovals", {
  defaultValue: () => noApprovals
})

