/**
 * A fetched HTML page reduced to the text a model should read: the main
 * content as Firefox's Reader View finds it (`@mozilla/readability`, over a
 * `linkedom` DOM), laid out as plain text with one line per block (headings,
 * paragraphs, list items), so the model gets the article, not the navigation,
 * scripts and markup. A page Readability finds no article in falls back to its
 * whole body, scripts and styles removed.
 */
import { Readability } from "@mozilla/readability"
import { parseHTML } from "linkedom"

export interface ReadablePage {
  readonly title: string
  readonly text: string
}

const BLOCKS = new Set([
  "ADDRESS", "ARTICLE", "ASIDE", "BLOCKQUOTE", "BR", "DD", "DIV", "DL", "DT", "FIGCAPTION", "FIGURE", "FOOTER",
  "H1", "H2", "H3", "H4", "H5", "H6", "HEADER", "HR", "LI", "MAIN", "NAV", "OL", "P", "PRE", "SECTION", "TABLE",
  "TD", "TH", "TR", "UL"
])
const SKIPPED = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "SVG", "CANVAS", "IFRAME", "OBJECT"])

interface DomNode {
  readonly nodeType: number
  readonly nodeName: string
  readonly textContent: string | null
  readonly childNodes: ArrayLike<DomNode>
}

const TEXT_NODE = 3
const ELEMENT_NODE = 1

/** Block-aware text of a subtree (iterative: pages nest deeply). */
const blockText = (root: DomNode): string => {
  const out: Array<string> = []
  const stack: Array<DomNode | "\n"> = [root]
  while (stack.length > 0) {
    const node = stack.pop()!
    if (node === "\n") {
      out.push("\n")
      continue
    }
    if (node.nodeType === TEXT_NODE) {
      out.push(node.textContent ?? "")
      continue
    }
    if (node.nodeType !== ELEMENT_NODE && node !== root) continue
    const name = node.nodeName.toUpperCase()
    if (SKIPPED.has(name)) continue
    const block = BLOCKS.has(name)
    if (block) {
      out.push("\n")
      if (name === "LI") out.push("- ")
      stack.push("\n")
    }
    // Read once: linkedom builds `childNodes` afresh on every access.
    const children = node.childNodes
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!)
  }
  return out.join("")
    .split("\n")
    .map((line) => line.replace(/\s+/g, " ").trim())
    .filter((line) => line !== "" && line !== "-")
    .join("\n")
}

export const readableText = (html: string): ReadablePage => {
  const { document } = parseHTML(html)
  const pageTitle = (document.title ?? "").trim()
  let article: ReturnType<Readability["parse"]> = null
  try {
    article = new Readability(document as never).parse()
  } catch {
    article = null
  }
  if (article !== null && typeof article.content === "string") {
    const text = blockText(parseHTML(`<html><body>${article.content}</body></html>`).document.body as never)
    if (text !== "") return { title: (article.title ?? "").trim() || pageTitle, text }
  }
  // Readability rewrites the DOM it reads: the fallback reads the page afresh.
  const body = parseHTML(html).document.body as unknown as DomNode | null
  return { title: pageTitle, text: body === null ? "" : blockText(body) }
}
