/**
 * The sub-agents port: what the job runner calls to carry out one job. Each
 * kind (research, demo, visual, and those an operator defined) runs a Chat Completions tool loop in an
 * isolated context, with its own tools (never the job tools) and its own
 * model (`modelFor(role)`), reporting a live activity line as it goes.
 *
 * `run` never fails: a sub-agent that cannot finish returns its kind's
 * failure shape (`subagentFailure`), which is steered like any result. The
 * runner owns the time limit (`JOB_TIMEOUT_MS`) and interrupts `run` past it.
 */
import type { ApprovalDecision, ChatMessage, JobInput, JobWaitingFor, JsonObject, KindName, SubagentDefinition, SubagentResult } from "@switchboard/domain"
import type { Checkpoint } from "./JobParking.ts"
import type { ChatKey } from "../users/ChatKey.ts"
import { Context } from "effect"
import type { Effect } from "effect"

/**
 * What a sub-agent may do with a call that needs a user's approval (a defined kind's MCP call):
 * park the job (`JobParking.ts`), and, resumed, learn the decision and start the call once.
 */
export interface JobApprovals {
  /** The saved state the job resumes from; undefined on a first run. */
  readonly checkpoint: Checkpoint | undefined
  /** The resumed call's decision (a denial once `APPROVAL_TIMEOUT` passed undecided). */
  readonly decision: Effect.Effect<ApprovalDecision>
  /** Before the approved call runs: false when an earlier run started it (it is never run again). */
  readonly start: Effect.Effect<boolean>
  /**
   * Saves the state and parks the job: the run ends there, with no result. Instead, why it cannot
   * wait: its state is larger than a job can keep (the run then fails with that reason).
   */
  park(
    state: { readonly messages: ReadonlyArray<ChatMessage>; readonly rounds: number; readonly approvalId: string; readonly callId: string },
    waitingFor: JobWaitingFor
  ): Effect.Effect<string | undefined>
}

export interface SubagentJob {
  readonly jobId: string
  readonly kind: KindName
  /** Already decoded with the kind's input schema (its definition in `JobKinds.ts`; a defined kind's: a JSON object). */
  readonly input: JobInput | JsonObject
  /** The chat the job belongs to (a defined kind's MCP calls are made for it). */
  readonly chatId?: ChatKey
  /** A defined kind's definition, as dispatched: the job runs the defined kinds' engine with it. */
  readonly definition?: SubagentDefinition
  /** Approvals inside the job; without it a call that needs one is refused (the sub-agent reads why). */
  readonly approvals?: JobApprovals
  /** Replaces the job's activity line, e.g. `web_search: "sigma.js v3"`. */
  readonly reportActivity: (line: string) => Effect.Effect<void>
}

export class Subagents extends Context.Service<Subagents, {
  run(job: SubagentJob): Effect.Effect<SubagentResult>
}>()("switchboard/server/jobs/Subagents") {}
