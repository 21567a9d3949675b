/**
 * The job pipeline assembled: the runner and the wake pipeline run in the
 * background for as long as the server does, beside the chat turns that
 * dispatch jobs and the route that lists them.
 */
import { Layer } from "effect"
import * as JobRunner from "./JobRunner.ts"
import { JobsConfig } from "./JobsConfig.ts"
import * as WakePipeline from "./WakePipeline.ts"

/** Both background loops; `JobsConfig` from the environment unless the caller provides one. */
export const JobsBackground = Layer.mergeAll(JobRunner.layer, WakePipeline.layer)

export { JobsConfig }
