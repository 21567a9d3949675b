/**
 * The port through which approvals meet calls that wait outside a chat's
 * transcript: a sub-agent job parked on its MCP call (docs/subagents.md). The
 * chat's approval route decides those too; the jobs feature implements this
 * (`jobs/JobApprovalsHttp.ts`). Without one, only a turn's approvals exist.
 */
import type { ApprovalDecision } from "@switchboard/domain"
import { Context, Effect } from "effect"
import type { ChatKey } from "../users/ChatKey.ts"

/** What deciding did: recorded, refused (decided already: the first decision holds), or no such call waits. */
export type ParkedOutcome = "decided" | "decided-already" | "unknown"

export interface ParkedApprovalsShape {
  decide(chatId: ChatKey, approvalId: string, decision: ApprovalDecision): Effect.Effect<ParkedOutcome>
}

export const ParkedApprovals = Context.Reference<ParkedApprovalsShape>("switchboard/server/approvals/ParkedApprovals", {
  defaultValue: () => ({ decide: () => Effect.succeed("unknown") })
})
