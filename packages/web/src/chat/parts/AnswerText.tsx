/**
 * A text part of the agent's answer, as sanitized markdown (`Markdown.tsx`). While the answer
 * streams (`state: "streaming"`) the same element grows in place.
 */
import type { UiTextPart } from "@switchboard/domain"
import { Markdown } from "../Markdown.tsx"

export function AnswerText({ part }: { readonly part: UiTextPart }) {
  return part.text === "" ? null : <Markdown text={part.text} />
}
