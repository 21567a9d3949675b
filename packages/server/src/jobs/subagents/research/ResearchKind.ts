/** The `research` job kind: a research sub-agent that searches, reads and writes a sourced brief. */
import { ResearchJob } from "@switchboard/domain"
import { Effect } from "effect"
import { defineJobKind, inputField, quoted } from "../../JobKindDefinition.ts"
import { activityLine } from "../ToolLoop.ts"
import * as PageFetcher from "./PageFetcher.ts"
import { runResearch } from "./Research.ts"
import * as WebSearch from "./WebSearch.ts"

export const researchKind = defineJobKind(ResearchJob, {
  modelVariable: "JOB_MODEL_RESEARCH",
  startActivity: (input) => activityLine(`researching:${quoted(inputField(input, "question"))}`),
  doneActivity: (result) => {
    const n = result.sources.length
    return n === 0 ? "done: no sources" : `done: ${n} source${n === 1 ? "" : "s"}`
  },
  subagent: (settings, overrides) =>
    Effect.gen(function*() {
      const fetcher = yield* PageFetcher.make({ ...overrides.fetch, allowPrivate: settings.fetchAllowPrivate })
      const search = settings.searchUrl === undefined ? undefined : yield* WebSearch.make(settings.searchUrl)
      return (input, reportActivity) => runResearch({ search, fetcher, model: settings.models.research }, input, reportActivity)
    })
})
