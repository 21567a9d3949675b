/**
 * One part of a message, by its `type` — one component per part type, as the AI SDK's chat UIs
 * dispatch them:
 *
 * | part | shown as |
 * | --- | --- |
 * | `text` | the user's words (`UserText`) or the answer's markdown (`AnswerText`); a steer's text is the model's copy of its artifact: shown only by a steer without one, as its result card |
 * | `step-start` | nothing (where a provider round began) |
 * | `tool-<job kind>` | the jobs views' `DispatchCard` (the sub-agent at work), whatever its state: a built-in kind's call, or a defined kind's (`useIsJobCall`: acknowledged as a job, listed among the chat's jobs, or named by the agent's `jobKinds`) |
 * | `tool-<name>`, `dynamic-tool` | by the part's state: `ToolInputCard` (`input-streaming`, `input-available`), `ToolOutputCard` (`output-available`), `ToolErrorCard` (`output-error`), `ToolApprovalCard` (`approval-requested`, `approval-responded`), `ToolDeniedCard` (`output-denied`) |
 * | `data-subagent-artifact` | the jobs views' `SteerCard` (a sub-agent's result) |
 * | any other `data-…` | nothing: a UI payload the console has no view for |
 *
 * A tool part carries its own input and output (`UiChat.ts` folded the result into it).
 */
import type { UiMessage } from "@switchboard/domain"
import { DispatchCard, SteerCard, useIsJobCall } from "../../jobs/JobViews.tsx"
import type { MessagePartData, ToolPart } from "../UiChat.ts"
import { artifactOf, hasArtifact, isToolPart, steerMarkerOf, toolNameOf } from "../UiChat.ts"
import { AnswerText } from "./AnswerText.tsx"
import { ToolApprovalCard } from "./ToolApprovalCard.tsx"
import { ToolDeniedCard } from "./ToolDeniedCard.tsx"
import { ToolErrorCard } from "./ToolErrorCard.tsx"
import { ToolInputCard } from "./ToolInputCard.tsx"
import { ToolOutputCard } from "./ToolOutputCard.tsx"
import { UserText } from "./UserText.tsx"

/** A tool part by its state; a job's call is its dispatch card in every state. */
function ToolPartView({ part }: { readonly part: ToolPart }) {
  const name = toolNameOf(part)
  const output = "output" in part ? part.output : undefined
  if (useIsJobCall({ name, toolCallId: part.toolCallId, state: part.state, output })) {
    return <DispatchCard toolCallId={part.toolCallId} kind={name} input={part.input} />
  }
  switch (part.state) {
    case "input-streaming":
    case "input-available":
      return <ToolInputCard part={part} />
    case "output-available":
      return <ToolOutputCard part={part} />
    case "output-error":
      return <ToolErrorCard part={part} />
    case "approval-requested":
    case "approval-responded":
      return <ToolApprovalCard part={part} />
    case "output-denied":
      return <ToolDeniedCard part={part} />
  }
}

export function MessagePart({ message, part }: { readonly message: UiMessage; readonly part: MessagePartData }) {
  switch (part.type) {
    case "text": {
      const marker = steerMarkerOf(message)
      if (marker !== undefined) {
        return hasArtifact(message) ? null : <SteerCard messageId={message.id} marker={marker} artifact={undefined} text={part.text} />
      }
      return message.role === "user" ? <UserText text={part.text} /> : <AnswerText part={part} />
    }
    case "step-start":
      return null
    case "dynamic-tool":
      return <ToolPartView part={part} />
    case "data-subagent-artifact": {
      const artifact = artifactOf(message, part)
      // An artifact that is not a valid one: a steer shows its text instead.
      return artifact === undefined ? null : <SteerCard messageId={message.id} marker={steerMarkerOf(message)} artifact={artifact} />
    }
    default:
      return isToolPart(part) ? <ToolPartView part={part} /> : null
  }
}
