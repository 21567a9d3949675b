/** `finish {summary}`: the goal is reached. Ends the task as succeeded; executes nothing. */
import type { ToolDefinition } from "@switchboard/domain"
import { Effect } from "effect"
import { finishToolName } from "../HostTool.ts"

export const finishTool: ToolDefinition = {
  name: finishToolName,
  description: "Call when the goal is reached. The summary says what was done; it becomes the task's result.",
  parameters: [{ key: "summary", type: "string", required: true, description: "What was done, in one or two sentences." }],
  execute: (args) => Effect.succeed({ summary: String(args["summary"]) })
}
