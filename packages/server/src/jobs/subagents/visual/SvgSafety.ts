/**
 * Whether an SVG is safe to show inline. UIs put the visual maker's SVG
 * straight into their page, where an SVG can run code and reach the network
 * like any HTML. So it must be a picture and nothing else:
 *
 * - no `<script>`, `<foreignObject>` (arbitrary HTML), `<iframe>`, `<object>`,
 *   `<embed>`, SVG Tiny `<handler>`/`<listener>`;
 * - no event-handler attributes (`onload`, `onclick`, … in any namespace);
 * - no external references: `href` / `xlink:href` only to a `#fragment` or an
 *   inline raster image (`data:image/png|jpeg|gif|webp`), every CSS `url(…)`
 *   likewise, no `@import`, no `<?xml-stylesheet?>`;
 * - no animation that sets an `href` or an event handler (`<set>` can write
 *   `javascript:` into a link after the check);
 * - no entity declarations (a DTD can hide any of the above from a scanner
 *   and expand it in the browser).
 *
 * The scan walks the parsed document (htmlparser2 in XML mode, entities
 * decoded), not the text, so spelling tricks (`&#106;avascript:`, upper case,
 * namespace prefixes) do not get past it. Well-formedness itself is
 * `SvgRender`'s to judge (resvg's parser is strict).
 */
import { Parser } from "htmlparser2"

const FORBIDDEN_ELEMENTS = new Set(["script", "foreignobject", "iframe", "object", "embed", "handler", "listener"])
const ANIMATIONS = new Set(["set", "animate", "animatemotion", "animatetransform", "animatecolor"])

/** A name without its namespace prefix, lower case: `xlink:href` → `href`, `svg:Script` → `script`. */
const localName = (name: string) => name.slice(name.indexOf(":") + 1).toLowerCase()

const SAFE_DATA_IMAGE = /^data:image\/(png|jpeg|jpg|gif|webp)[;,]/i

/** Whether a reference stays inside the document (or is an inline raster image). */
const internalReference = (value: string) => {
  const target = value.trim()
  return target.startsWith("#") || SAFE_DATA_IMAGE.test(target)
}

/** The targets of every CSS `url(…)` in a value. */
const cssUrls = (css: string): Array<string> =>
  [...css.matchAll(/url\(\s*(['"]?)(.*?)\1\s*\)/gi)].map((m) => m[2] ?? "")

const cssProblems = (css: string, where: string): Array<string> => {
  const problems: Array<string> = []
  if (/@import/i.test(css)) problems.push(`${where}: @import loads an external stylesheet`)
  for (const target of cssUrls(css)) {
    if (!internalReference(target)) problems.push(`${where}: url(${target}) is an external reference`)
  }
  return problems
}

/** Every reason to refuse this SVG; empty when it is safe to show inline. */
export const svgSafetyProblems = (svg: string): ReadonlyArray<string> => {
  const problems: Array<string> = []
  if (/<!ENTITY/i.test(svg)) problems.push("entity declarations (<!ENTITY …>) are not allowed")
  let root: string | undefined
  const open: Array<string> = []
  let styleText = ""

  const parser = new Parser({
    onprocessinginstruction: (name) => {
      const target = name.replace(/^[?!]/, "").toLowerCase()
      if (target !== "xml" && target !== "doctype") problems.push(`the processing instruction <${name}> is not allowed`)
    },
    onopentag: (name, attributes) => {
      const element = localName(name)
      root ??= element
      open.push(element)
      if (FORBIDDEN_ELEMENTS.has(element)) problems.push(`<${name}> is not allowed`)
      for (const [attribute, value] of Object.entries(attributes)) {
        const key = localName(attribute)
        if (key.startsWith("on")) problems.push(`the event-handler attribute ${attribute} on <${name}> is not allowed`)
        else if (key === "href" || key === "src") {
          if (!internalReference(value)) {
            problems.push(`${attribute}="${value.slice(0, 80)}" on <${name}> is an external reference (only #fragments and data:image)`)
          }
        } else if (value.toLowerCase().includes("url(")) problems.push(...cssProblems(value, `${attribute} on <${name}>`))
      }
      if (ANIMATIONS.has(element)) {
        const target = localName(attributes["attributeName"] ?? attributes["attributename"] ?? "")
        if (target === "href" || target.startsWith("on")) problems.push(`<${name}> may not animate ${target}`)
      }
    },
    ontext: (text) => {
      if (open[open.length - 1] === "style") styleText += text
    },
    oncdatastart: () => undefined,
    onclosetag: (name) => {
      const element = localName(name)
      if (element === "style") {
        problems.push(...cssProblems(styleText, "<style>"))
        styleText = ""
      }
      open.pop()
    }
  }, { xmlMode: true, decodeEntities: true, recognizeCDATA: true })
  parser.write(svg)
  parser.end()

  if (root === undefined) problems.unshift("there is no <svg> element")
  else if (root !== "svg") problems.unshift(`the root element is <${root}>, not <svg>`)
  return [...new Set(problems)]
}
