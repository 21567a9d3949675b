/** What the sub-agents are configured with (`SubagentConfig` reads it), as the job kinds take it. */
import type { JobKind } from "@switchboard/domain"
import type { PageFetcherOptions } from "./research/PageFetcher.ts"

/** Knobs tests turn that no environment variable does. */
export interface SubagentOverrides {
  readonly fetch?: Omit<PageFetcherOptions, "allowPrivate">
}

export interface SubagentSettings {
  readonly models: Readonly<Record<JobKind, string | undefined>>
  /** Without it, the research sub-agent has no `web_search`. */
  readonly searchUrl: string | undefined
  readonly fetchAllowPrivate: boolean
  readonly chromiumPath: string
  readonly visualVision: boolean
  /** `LLM_MODEL`: a defined kind without a `model` of its own uses it (absent: the adapter's own). */
  readonly defaultModel?: string | undefined
}
