/**
 * Job kinds: a kind's name is the name of the job tool the model is offered.
 * `research`, `demo` and `visual` are built in (`Jobs.ts` has their specs);
 * any other is a sub-agent kind an operator defined (`SubagentKinds.ts`,
 * docs/subagents.md).
 */
import { Schema } from "effect"

/** The built-in kinds, in the order their tools are offered. */
export const JobKind = Schema.Literals(["research", "demo", "visual"])
export type JobKind = typeof JobKind.Type

/** 1–32 of `a-z 0-9 -`: any kind's name, built in or defined (what a job, a dispatch, an agent names). */
export const KindName = Schema.String.check(
  Schema.isPattern(/^[a-z0-9-]{1,32}$/u, { message: "must be 1 to 32 of a-z, 0-9 and -" })
)
export type KindName = typeof KindName.Type

export const isBuiltInKind = (name: string): name is JobKind => (JobKind.literals as ReadonlyArray<string>).includes(name)

/** Whether `name` could name a kind at all (built in or defined). */
export const isKindName = (name: string): boolean => /^[a-z0-9-]{1,32}$/.test(name)
