/**
 * What one job kind is, to the server: the domain's spec of it (its tool, its
 * input and result schemas, its failure shape, its steer's words) and what
 * only the server needs — its sub-agent, its model's variable, its activity
 * lines. Each kind's folder under `subagents/` exports one; the registry
 * (`JobKinds.ts`) lists them, and everything that used to switch on a kind's
 * name looks it up there.
 */
import type { JobInputs, JobKind, JobKindSpec, JobResults } from "@switchboard/domain"
import type { Effect, Scope } from "effect"
import type { ProviderAdapter } from "@switchboard/providers"
import type { SubagentOverrides, SubagentSettings } from "./subagents/SubagentSettings.ts"

/** Runs one job of the kind: `run` never fails, whatever goes wrong ends in the kind's failure shape. */
export type SubagentRun<I, R> = (input: I, reportActivity: (line: string) => Effect.Effect<void>) => Effect.Effect<R, never, ProviderAdapter>

/** What the job pipeline needs of any kind, built in or defined: its spec and its activity lines. */
export interface KindBehaviour<K extends string, I, R> extends JobKindSpec<K, I, R> {
  /** What the job is to do, from its input (which may be invalid: the line is then the kind's verb alone). */
  readonly startActivity: (input: unknown) => string
  /** What a successful run did, from its result (a failure's line is `error: <reason>`, see `failureReason`). */
  readonly doneActivity: (result: R) => string
}

export interface JobKindDefinition<K extends JobKind = JobKind, I = JobInputs[K], R = JobResults[K]> extends KindBehaviour<K, I, R> {
  /** The variable naming the sub-agent's model (else `LLM_MODEL`): its setting is made from it (`SubagentConfig.ts`). */
  readonly modelVariable: string
  /**
   * The sub-agent, made once by the sub-agents' layer: its long-lived resources (HTTP agents, a
   * browser) belong to the layer's scope.
   */
  readonly subagent: (settings: SubagentSettings, overrides: SubagentOverrides) => Effect.Effect<SubagentRun<I, R>, never, Scope.Scope>
}

/** A kind's definition: the domain's spec and the server's part. */
export const defineJobKind = <K extends JobKind>(
  spec: JobKindSpec<K, JobInputs[K], JobResults[K]>,
  server: Omit<JobKindDefinition<K>, keyof JobKindSpec<K, JobInputs[K], JobResults[K]>>
): JobKindDefinition<K> => ({ ...spec, ...server })

/** A string field of a job's input, when it has one (the input may be invalid). */
export const inputField = (input: unknown, key: string): string | undefined => {
  const value = typeof input === "object" && input !== null ? (input as Record<string, unknown>)[key] : undefined
  return typeof value === "string" && value.trim() !== "" ? value : undefined
}

/** ` "text"` on one line, for an activity line (nothing without a text). */
export const quoted = (text: string | undefined): string =>
  text === undefined ? "" : ` ${JSON.stringify(text.replace(/\s+/g, " ").trim())}`
