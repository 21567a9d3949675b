/** The job kinds a server knows: each a job tool the model is offered (`Jobs.ts` has their specs). */
import { Schema } from "effect"

export const JobKind = Schema.Literals(["research", "demo", "visual"])
export type JobKind = typeof JobKind.Type
