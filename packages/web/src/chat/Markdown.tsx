/**
 * An assistant's text as markdown (`MarkdownRenderer.ts`: marked, then DOMPurify). The renderer is
 * its own chunk, asked for as the page starts, so it is not in the first load; until it is there a
 * text shows as plain text (pre-wrapped), then as markdown. A message that streams is parsed again
 * as it grows, into the same element: it grows in place, never re-mounted.
 */
import { memo, useMemo, useSyncExternalStore } from "react"

type Render = (text: string) => string

let render: Render | undefined
const waiting = new Set<() => void>()
// Asked for at once: by the time an answer arrives, the renderer is there.
void import("./MarkdownRenderer.ts").then((module) => {
  render = module.renderMarkdown
  for (const wake of waiting) wake()
})

const subscribe = (wake: () => void) => {
  waiting.add(wake)
  return () => waiting.delete(wake)
}
const current = () => render

export const Markdown = memo(function Markdown({ text }: { readonly text: string }) {
  const renderer = useSyncExternalStore(subscribe, current, current)
  const html = useMemo(() => renderer?.(text), [renderer, text])
  return html === undefined
    ? <div className="markdown markdown-plain">{text}</div>
    : <div className="markdown" dangerouslySetInnerHTML={{ __html: html }} />
})
