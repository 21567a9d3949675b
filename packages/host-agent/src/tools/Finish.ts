/** `finish {summary}`: the goal is reached. Ends the task as succeeded; executes nothing. */
import { Effect, Schema } from "effect"
import { finishToolName, hostTool } from "../HostTool.ts"

export const finishTool = hostTool({
  name: finishToolName,
  description: "Call when the goal is reached. The summary says what was done; it becomes the task's result.",
  args: Schema.Struct({ summary: Schema.String.annotate({ description: "What was done, in one or two sentences." }) }),
  execute: ({ summary }) => Effect.succeed({ summary })
})
