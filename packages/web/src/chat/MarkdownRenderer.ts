/**
 * Markdown to sanitized HTML: parsed by `marked` (GitHub's flavour), then sanitized by DOMPurify
 * before it reaches the DOM — no script, no event handler, no `style` (the page's policy would
 * refuse it anyway), no form. Links open in a new tab with `rel="noopener noreferrer"`; code
 * blocks are keyboard-scrollable. Its own chunk (`Markdown.tsx` loads it): the two libraries are
 * not in the console's first load.
 *
 * Nothing in an answer makes the page load from another origin (`ImagePolicy.ts`): an image —
 * markdown's or raw HTML's — of an origin the server did not list (`CONSOLE_IMAGE_ORIGINS`)
 * becomes a plain link to it, its alt text the link's text, replaced while DOMPurify walks its
 * own inert document (where nothing loads); `srcset`, `poster`, `background` and `ping`, and the
 * media elements, are dropped, so `src` is the only address an element keeps.
 */
import DOMPurify from "dompurify"
import { Marked } from "marked"
import { imageLinkHref, imageMayLoad, readImageOrigins } from "./ImagePolicy.ts"

const marked = new Marked({ gfm: true, breaks: true, async: false })

const imageOrigins = readImageOrigins()

const pageAddress = () => (typeof location === "undefined" ? "http://localhost/" : location.href)

/** An image that may not load, as a link to it (or its text, for an address that is not http(s)). */
const fenceImage = (image: Element) => {
  const src = image.getAttribute("src")
  if (src === null) return
  const base = pageAddress()
  if (imageMayLoad(src, base, imageOrigins)) {
    image.setAttribute("referrerpolicy", "no-referrer")
    return
  }
  const href = imageLinkHref(src, base)
  const alt = image.getAttribute("alt")?.trim() ?? ""
  const document = image.ownerDocument
  const replacement = document.createElement(href === undefined ? "span" : "a")
  replacement.textContent = alt === "" ? href ?? src : alt
  replacement.setAttribute("data-image-link", "")
  if (href !== undefined) {
    replacement.setAttribute("href", href)
    replacement.setAttribute("target", "_blank")
    replacement.setAttribute("rel", "noopener noreferrer")
    replacement.setAttribute("title", `Image not loaded: ${href}`)
  }
  image.replaceWith(replacement)
}

const purify = DOMPurify()
purify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "IMG") fenceImage(node)
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
    FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "iframe", "picture", "source", "video", "audio", "track"],
    FORBID_ATTR: ["style", "class", "id", "srcset", "poster", "background", "ping"]
  })
