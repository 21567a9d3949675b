/**
 * Markdown to sanitized HTML: parsed by `marked` (GitHub's flavour), then sanitized by DOMPurify
 * before it reaches the DOM — no script, no event handler, no `style` (the page's policy would
 * refuse it anyway), no form. Links open in a new tab with `rel="noopener noreferrer"`; code
 * blocks are keyboard-scrollable. Its own chunk (`Markdown.tsx` loads it): the two libraries are
 * not in the console's first load.
 */
import DOMPurify from "dompurify"
import { Marked } from "marked"

const marked = new Marked({ gfm: true, breaks: true, async: false })

const purify = DOMPurify()
purify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A" && node.hasAttribute("href")) {
    node.setAttribute("target", "_blank")
    node.setAttribute("rel", "noopener noreferrer")
  }
  // A long line scrolls inside its block: the keyboard must reach it.
  if (node.tagName === "PRE") node.setAttribute("tabindex", "0")
})

/** Sanitized HTML of a markdown text. */
export const renderMarkdown = (text: string): string =>
  purify.sanitize(marked.parse(text) as string, {
    USE_PROFILES: { html: true },
    FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "iframe"],
    FORBID_ATTR: ["style", "class", "id"]
  })
