/**
 * A research brief's Markdown, the little of it briefs use — paragraphs, headings, lists, code
 * blocks, `code`, **bold**, *emphasis* and [links](https://…) — drawn as React elements. Nothing is
 * ever parsed as HTML: text stays text, and a link is one only for an http(s) URL.
 */
import type { ReactNode } from "react"

/** The URL when it is a web address (http or https), else `undefined`: never `javascript:` and the like. */
export const webUrl = (raw: string): string | undefined => {
  try {
    const url = new URL(raw)
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined
  } catch {
    return undefined
  }
}

/** A link out of the console: a new tab, no opener, no referrer. */
export function ExternalLink({ children, href }: { readonly href: string; readonly children: ReactNode }) {
  return <a href={href} target="_blank" rel="noopener noreferrer">{children}</a>
}

const INLINE = /(`[^`\n]+`)|(\*\*[^*\n]+\*\*)|(\*[^*\s][^*\n]*\*|_[^_\s][^_\n]*_)|(\[[^\]\n]+\]\([^)\s]+\))|(https?:\/\/[^\s)<>]+[^\s)<>.,;:!?'"])/g

const inline = (text: string, key: string): Array<ReactNode> => {
  const nodes: Array<ReactNode> = []
  let last = 0
  let n = 0
  for (const match of text.matchAll(INLINE)) {
    const [whole, code, bold, em, link, bare] = match
    if (match.index > last) nodes.push(text.slice(last, match.index))
    const k = `${key}-${n++}`
    if (code !== undefined) nodes.push(<code key={k}>{code.slice(1, -1)}</code>)
    else if (bold !== undefined) nodes.push(<strong key={k}>{inline(bold.slice(2, -2), k)}</strong>)
    else if (em !== undefined) nodes.push(<em key={k}>{inline(em.slice(1, -1), k)}</em>)
    else if (link !== undefined) {
      const split = link.indexOf("](")
      const label = link.slice(1, split)
      const href = webUrl(link.slice(split + 2, -1))
      nodes.push(href === undefined ? label : <ExternalLink key={k} href={href}>{inline(label, k)}</ExternalLink>)
    } else if (bare !== undefined) {
      const href = webUrl(bare)
      nodes.push(href === undefined ? bare : <ExternalLink key={k} href={href}>{bare}</ExternalLink>)
    }
    last = match.index + whole.length
  }
  if (last < text.length) nodes.push(text.slice(last))
  return nodes
}

type Block =
  | { readonly type: "heading"; readonly text: string }
  | { readonly type: "paragraph"; readonly lines: ReadonlyArray<string> }
  | { readonly type: "list"; readonly ordered: boolean; readonly items: ReadonlyArray<string> }
  | { readonly type: "code"; readonly text: string }

const BULLET = /^\s*[-*+]\s+(.*)$/
const NUMBERED = /^\s*\d+[.)]\s+(.*)$/

export const blocksOf = (source: string): ReadonlyArray<Block> => {
  const blocks: Array<Block> = []
  const lines = source.replace(/\r\n?/g, "\n").split("\n")
  for (let i = 0; i < lines.length;) {
    const line = lines[i]!
    if (line.trim() === "") {
      i++
    } else if (line.trimStart().startsWith("```")) {
      const body: Array<string> = []
      for (i++; i < lines.length && !lines[i]!.trimStart().startsWith("```"); i++) body.push(lines[i]!)
      i++
      blocks.push({ type: "code", text: body.join("\n") })
    } else if (/^#{1,6}\s/.test(line)) {
      blocks.push({ type: "heading", text: line.replace(/^#{1,6}\s+/, "").replace(/\s+#+\s*$/, "") })
      i++
    } else if (BULLET.test(line) || NUMBERED.test(line)) {
      const ordered = !BULLET.test(line)
      const pattern = ordered ? NUMBERED : BULLET
      const items: Array<string> = []
      for (; i < lines.length && lines[i]!.trim() !== ""; i++) {
        const item = pattern.exec(lines[i]!)
        if (item !== null) items.push(item[1]!)
        else if (items.length > 0) items[items.length - 1] += ` ${lines[i]!.trim()}`
      }
      blocks.push({ type: "list", ordered, items })
    } else {
      const paragraph: Array<string> = []
      for (; i < lines.length; i++) {
        const next = lines[i]!
        if (next.trim() === "" || /^#{1,6}\s/.test(next) || next.trimStart().startsWith("```")) break
        if (paragraph.length > 0 && (BULLET.test(next) || NUMBERED.test(next))) break
        paragraph.push(next.trim())
      }
      blocks.push({ type: "paragraph", lines: paragraph })
    }
  }
  return blocks
}

/** One line of text with the same inline marks (code, bold, emphasis, http(s) links), no blocks. */
export function InlineText({ text }: { readonly text: string }) {
  return <>{inline(text, "i")}</>
}

export function BriefText({ text }: { readonly text: string }) {
  return (
    <div className="brief-text">
      {blocksOf(text).map((block, i) => {
        const key = `b${i}`
        switch (block.type) {
          case "heading":
            // Inside a card, under the page's own headings: a strong line, not a heading of the page's outline.
            return <p key={key} className="brief-text__heading"><strong>{inline(block.text, key)}</strong></p>
          case "code":
            return <pre key={key} tabIndex={0}><code>{block.text}</code></pre>
          case "list": {
            const items = block.items.map((item, j) => <li key={j}>{inline(item, `${key}-${j}`)}</li>)
            return block.ordered ? <ol key={key}>{items}</ol> : <ul key={key}>{items}</ul>
          }
          case "paragraph":
            return (
              <p key={key}>
                {block.lines.flatMap((line, j) => j === 0 ? inline(line, `${key}-${j}`) : [<br key={`${key}-br${j}`} />, ...inline(line, `${key}-${j}`)])}
              </p>
            )
        }
      })}
    </div>
  )
}
