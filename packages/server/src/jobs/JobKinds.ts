/**
 * The registry of job kinds: every kind the server knows, each defined in its
 * own folder under `subagents/` (`JobKindDefinition.ts`). The job tools
 * offered to the model, the decoding of their calls, the sub-agent a job
 * runs, its model's variable and its activity lines all come from here, and
 * so does the check of a stored job's kind (the database does not constrain
 * it: migration 0007). A new kind is its folder, its domain spec and a line
 * below.
 */
import type { JobKind } from "@switchboard/domain"
import type { JobKindDefinition } from "./JobKindDefinition.ts"
import { demoKind } from "./subagents/demo/DemoKind.ts"
import { researchKind } from "./subagents/research/ResearchKind.ts"
import { visualKind } from "./subagents/visual/VisualKind.ts"

/** By kind; the order is the job tools' order as the model is offered them. */
export const jobKinds: { readonly [K in JobKind]: JobKindDefinition<K> } = {
  research: researchKind,
  demo: demoKind,
  visual: visualKind
}

/** Every kind's definition, in the registry's order. */
export const registeredKinds: ReadonlyArray<JobKindDefinition> = Object.values(jobKinds) as ReadonlyArray<JobKindDefinition>

/** The kinds' names, in the registry's order (what the app accepts as a stored job's kind). */
export const kindNames: ReadonlyArray<JobKind> = registeredKinds.map((k) => k.kind)

/** Whether `name` is a registered kind. */
export const isRegisteredKind = (name: string): name is JobKind => Object.hasOwn(jobKinds, name)

/**
 * A kind's definition where the kind is only known at run time: its input and result typed as
 * the union of every kind's (each kind's own functions only ever see its own).
 */
export const kindOf = (kind: JobKind): JobKindDefinition<JobKind, any, any> => jobKinds[kind] as JobKindDefinition<JobKind, any, any>
