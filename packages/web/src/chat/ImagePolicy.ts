/**
 * Which images the console may load (docs/users.md, "No leak through the page"). An image is a
 * request the page makes by itself: a model's answer naming `![x](https://elsewhere/?q=…)` would
 * carry whatever the answer holds to another origin, with no click. So a markdown image loads
 * only from the page's own origin, as a `data:` URL, as a `blob:` of the page's own, or from an
 * origin the server lists in `CONSOLE_IMAGE_ORIGINS`; any other stays a link
 * (`MarkdownRenderer.ts`). The server tells the page its list in `index.html`'s
 * `<meta name="switchboard-image-origins">` (packages/server/src/http/WebConsole.ts), and its
 * Content-Security-Policy's `img-src` says the same, so a slip here is still refused by the browser.
 */

/** The `<meta>` the server puts the allowed origins in, space-separated. */
export const IMAGE_ORIGINS_META = "switchboard-image-origins"

/** An `http(s)` origin exactly as `URL.origin` writes it. */
const isOrigin = (entry: string) => {
  try {
    const url = new URL(entry)
    return (url.protocol === "http:" || url.protocol === "https:") && url.origin === entry
  } catch {
    return false
  }
}

/** The origins listed in the page's `<meta>` (none without it: the page's own only). */
export const readImageOrigins = (doc: Pick<Document, "querySelector"> | undefined = globalThis.document): ReadonlyArray<string> => {
  const content = doc?.querySelector(`meta[name="${IMAGE_ORIGINS_META}"]`)?.getAttribute("content") ?? ""
  return content.split(/[\s,]+/).filter(isOrigin)
}

/**
 * Whether an image at `src` (as written in the answer: resolved against `base`, the page's address)
 * may load: the page's own origin, a `data:` URL, a `blob:` URL of the page's own origin, or an
 * `http(s)` URL of one of `allowed`. Anything else — another origin, a protocol-relative
 * `//elsewhere/x.png`, another scheme, what does not parse — may not.
 */
export const imageMayLoad = (src: string, base: string, allowed: ReadonlyArray<string>): boolean => {
  let url: URL
  let own: string
  try {
    url = new URL(src.trim(), base)
    own = new URL(base).origin
  } catch {
    return false
  }
  if (url.protocol === "data:") return true
  // `blob:https://host/uuid`: its origin is the page that made it.
  if (url.protocol === "blob:") return url.origin === own
  if (url.protocol !== "http:" && url.protocol !== "https:") return false
  return url.origin === own || allowed.includes(url.origin)
}

/** The address a link to an image that may not load points to: `http(s)` only, else none. */
export const imageLinkHref = (src: string, base: string): string | undefined => {
  try {
    const url = new URL(src.trim(), base)
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined
  } catch {
    return undefined
  }
}
