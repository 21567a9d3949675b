/**
 * The sub-agents port: what the job runner calls to carry out one job. Each
 * kind (research, demo, visual) runs its own Chat Completions tool loop in an
 * isolated context, with its own tools (never the job tools) and its own
 * model (`modelFor(role)`), reporting a live activity line as it goes.
 *
 * `run` never fails: a sub-agent that cannot finish returns its kind's
 * failure shape (`subagentFailure`), which is steered like any result. The
 * runner owns the time limit (`JOB_TIMEOUT_MS`) and interrupts `run` past it.
 */
import type { JobInput, JobKind, SubagentResult } from "@switchboard/domain"
import { Context } from "effect"
import type { Effect } from "effect"

export interface SubagentJob {
  readonly jobId: string
  readonly kind: JobKind
  /** Already decoded with the kind's input schema (its definition in `JobKinds.ts`). */
  readonly input: JobInput
  /** Replaces the job's activity line, e.g. `web_search: "sigma.js v3"`. */
  readonly reportActivity: (line: string) => Effect.Effect<void>
}

export class Subagents extends Context.Service<Subagents, {
  run(job: SubagentJob): Effect.Effect<SubagentResult>
}>()("switchboard/server/jobs/Subagents") {}
