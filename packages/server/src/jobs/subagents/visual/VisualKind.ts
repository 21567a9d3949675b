/** The `visual` job kind: a visual-maker sub-agent that draws one SVG figure and checks its render. */
import { VisualJob } from "@switchboard/domain"
import { Effect } from "effect"
import { defineJobKind, inputField, quoted } from "../../JobKindDefinition.ts"
import { activityLine } from "../ToolLoop.ts"
import { runVisual } from "./Visual.ts"

export const visualKind = defineJobKind(VisualJob, {
  modelVariable: "JOB_MODEL_VISUAL",
  startActivity: (input) => activityLine(`drawing:${quoted(inputField(input, "brief"))}`),
  doneActivity: () => "done: figure",
  subagent: (settings) =>
    Effect.succeed((input, reportActivity) =>
      runVisual({ model: settings.models.visual, vision: settings.visualVision }, input, reportActivity)
    )
})
