/**
 * The registry of job kinds: every kind the server knows, each defined in its
 * own folder under `subagents/` (`JobKindDefinition.ts`). The job tools
 * offered to the model, the decoding of their calls, the sub-agent a job
 * runs, its model's variable and its activity lines all come from here, and
 * so does the check of a stored job's kind (the database does not constrain
 * it: migration 0007). A new kind is its folder, its domain spec and a line
 * below.
 */
import type { JobKind, JsonObject } from "@switchboard/domain"
import { definedKindSpec } from "@switchboard/domain"
import type { JobKindDefinition, KindBehaviour } from "./JobKindDefinition.ts"
import { inputField, quoted } from "./JobKindDefinition.ts"
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
 * What a kind an operator defined (docs/subagents.md) is to the job pipeline: the domain's defined
 * kinds' spec, its activity lines from its name (and its input's first text, when it has one).
 * The sub-agent it runs is the defined kinds' engine (`subagents/defined/`).
 */
export const definedKind = (kind: string): KindBehaviour<string, JsonObject, JsonObject> => ({
  ...definedKindSpec(kind),
  startActivity: (input) => {
    const first = typeof input === "object" && input !== null
      ? Object.keys(input).map((key) => inputField(input, key)).find((text) => text !== undefined)
      : undefined
    return `${kind}: working${first === undefined ? "" : ` on${quoted(first.slice(0, 80))}`}`
  },
  doneActivity: () => "done: result submitted"
})

/**
 * A kind's behaviour where the kind is only known at run time: a registered kind's own, its
 * input and result typed as the union of every kind's (each kind's own functions only ever see
 * its own), or a defined kind's.
 */
export const kindOf = (kind: string): KindBehaviour<string, any, any> =>
  isRegisteredKind(kind) ? jobKinds[kind] as JobKindDefinition<JobKind, any, any> : definedKind(kind)
