/** `fail {reason}`: the goal cannot be reached. Ends the task as failed; executes nothing. */
import { Effect, Schema } from "effect"
import { failToolName, hostTool } from "../HostTool.ts"

export const failTool = hostTool({
  name: failToolName,
  description: "Call when the goal cannot be reached. The reason becomes the task's result.",
  args: Schema.Struct({ reason: Schema.String.annotate({ description: "Why the goal cannot be reached." }) }),
  execute: ({ reason }) => Effect.succeed({ reason })
})
