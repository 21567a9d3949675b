/** `fail {reason}`: the goal cannot be reached. Ends the task as failed; executes nothing. */
import type { ToolDefinition } from "@switchboard/domain"
import { Effect } from "effect"
import { failToolName } from "../HostTool.ts"

export const failTool: ToolDefinition = {
  name: failToolName,
  description: "Call when the goal cannot be reached. The reason becomes the task's result.",
  parameters: [{ key: "reason", type: "string", required: true, description: "Why the goal cannot be reached." }],
  execute: (args) => Effect.succeed({ reason: String(args["reason"]) })
}
