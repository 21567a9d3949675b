/**
 * The visual sub-agent: real SVG rendered to PNG with resvg, the fake LLM
 * scripted call by call (and shown the render as an image), and the safety
 * scan that keeps code and external references out of inline SVG.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { VisualResult } from "@switchboard/domain"
import { isSubagentFailure } from "@switchboard/domain"
import { renderSvg, RENDER_WIDTH } from "../../../src/jobs/subagents/visual/SvgRender.ts"
import { svgSafetyProblems } from "../../../src/jobs/subagents/visual/SvgSafety.ts"
import { VISUAL_MAX_ATTEMPTS } from "../../../src/jobs/subagents/visual/Visual.ts"
import { FakeOpenAi, FakeOpenAiServer } from "@switchboard/providers/testing"
import { call, offeredTools, runJob, settings, subagentsFor, toolResults, wireMessages } from "./Harness.ts"

const svg = (inner: string, attributes = "") =>
  `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 200 100"${attributes}>${inner}</svg>`

const GOOD = svg(
  `<defs><linearGradient id="g"><stop offset="0" stop-color="#36c"/><stop offset="1" stop-color="#9cf"/></linearGradient></defs>` +
    `<rect x="10" y="10" width="180" height="60" fill="url(#g)"/><text x="20" y="90" font-family="sans-serif">Queue</text>`
)
const REVISED = svg(`<rect x="10" y="10" width="90" height="80" fill="#c33"/><use href="#missing"/>`)

const visual = (brief = "A queue drawn as a bar with a label.") => runJob<VisualResult>("visual", { brief })

/** The images (data URLs) a recorded request showed the model. */
const imagesShown = (fake: FakeOpenAi.FakeOpenAi, index: number): Array<string> =>
  wireMessages(fake, index).flatMap((m) =>
    Array.isArray(m["content"])
      ? (m["content"] as Array<{ type: string; image_url?: { url: string } }>).flatMap((part) =>
        part.type === "image_url" && part.image_url ? [part.image_url.url] : []
      )
      : []
  )

/** Width and height from a PNG's IHDR chunk. */
const pngSize = (dataUrl: string) => {
  const bytes = Buffer.from(dataUrl.replace(/^data:image\/png;base64,/, ""), "base64")
  assert.strictEqual(bytes.subarray(1, 4).toString("latin1"), "PNG")
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) }
}

layer(FakeOpenAiServer.layer(), { excludeTestServices: true })("visual sub-agent", (it) => {
  const fresh = Effect.gen(function*() {
    const fake = yield* FakeOpenAiServer
    fake.reset()
    return fake
  })
  const withSettings = (fake: FakeOpenAi.FakeOpenAi, vision = true) =>
    Effect.provide(subagentsFor(fake, settings({ visualVision: vision })))

  it.effect("a valid SVG is rendered, shown to the maker once as a PNG, and delivered with its note", () =>
    Effect.gen(function*() {
      const fake = yield* fresh
      fake.enqueue(
        FakeOpenAi.reply.toolCalls([call("write_svg", { svg: GOOD })]),
        FakeOpenAi.reply.text("A gradient bar labelled Queue.")
      )

      const { activity, result } = yield* visual().pipe(withSettings(fake))

      assert.deepStrictEqual(result, { svg: GOOD, notes: "A gradient bar labelled Queue." })
      assert.isFalse(isSubagentFailure("visual", result))
      assert.deepStrictEqual(activity, ["write_svg: rendering the figure (attempt 1)"])
      assert.deepStrictEqual(offeredTools(fake, 0), ["write_svg"])
      assert.strictEqual((fake.chatRequests()[0]?.body as { model: string }).model, "visual-model")
      assert.deepStrictEqual(imagesShown(fake, 0), [])
      const shown = imagesShown(fake, 1)
      assert.strictEqual(shown.length, 1)
      assert.deepStrictEqual(pngSize(shown[0]!), { width: RENDER_WIDTH, height: RENDER_WIDTH / 2 })
      assert.strictEqual((toolResults(fake, 1)[0]?.["result"] as { status?: string } | undefined)?.status, "rendered")
    }))

  it.effect("after its look the maker may revise; the revision is checked and delivered without a second look", () =>
    Effect.gen(function*() {
      const fake = yield* fresh
      fake.enqueue(
        FakeOpenAi.reply.toolCalls([call("write_svg", { svg: GOOD })]),
        FakeOpenAi.reply.toolCalls([call("write_svg", { svg: REVISED, notes: "A red block." })])
      )
      const { result } = yield* visual().pipe(withSettings(fake))
      assert.deepStrictEqual(result, { svg: REVISED, notes: "A red block." })
      assert.strictEqual(fake.chatRequests().length, 2)
    }))

  it.effect("script, onload and an external href are refused back to the maker with the reason, then fixed", () =>
    Effect.gen(function*() {
      const fake = yield* fresh
      fake.enqueue(
        FakeOpenAi.reply.toolCalls([call("write_svg", { svg: svg(`<script>alert(1)</script><rect width="9" height="9"/>`) })]),
        FakeOpenAi.reply.toolCalls([call("write_svg", { svg: svg(`<rect width="9" height="9"/>`, ` onload="alert(1)"`) })]),
        FakeOpenAi.reply.toolCalls([call("write_svg", { svg: svg(`<image xlink:href="https://evil.example/x.png" width="9" height="9"/>`) })]),
        FakeOpenAi.reply.toolCalls([call("write_svg", { svg: GOOD, notes: "Bar and label." })]),
        FakeOpenAi.reply.text("Looks right.")
      )

      const { result } = yield* visual().pipe(withSettings(fake))

      const errors = [1, 2, 3].map((i) => String(toolResults(fake, i).at(-1)?.["error"]))
      for (const error of errors) assert.match(error, /^refused: the SVG is shown inline in a web page/)
      assert.include(errors[0], "<script> is not allowed")
      assert.include(errors[1], "the event-handler attribute onload on <svg> is not allowed")
      assert.include(errors[2], `xlink:href="https://evil.example/x.png" on <image> is an external reference`)
      assert.deepStrictEqual(result, { svg: GOOD, notes: "Bar and label." })
    }))

  it.effect("an unparseable SVG goes back to the maker and is fixed", () =>
    Effect.gen(function*() {
      const fake = yield* fresh
      fake.enqueue(
        FakeOpenAi.reply.toolCalls([call("write_svg", { svg: `<svg xmlns="http://www.w3.org/2000/svg"><rect` })]),
        FakeOpenAi.reply.toolCalls([call("write_svg", { svg: GOOD })]),
        FakeOpenAi.reply.text("Fixed.")
      )
      const { result } = yield* visual().pipe(withSettings(fake))
      assert.match(String(toolResults(fake, 1)[0]?.["error"]), /^the SVG does not parse: /)
      assert.strictEqual(result.svg, GOOD)
    }))

  it.effect("a maker that never gets it right ends in the failure shape after a bounded number of attempts", () =>
    Effect.gen(function*() {
      const fake = yield* fresh
      fake.respondWith(() => FakeOpenAi.reply.toolCalls([call("write_svg", { svg: "<svg><g>" })]))
      const { result } = yield* visual().pipe(withSettings(fake))
      assert.isTrue(isSubagentFailure("visual", result))
      assert.match(result.notes ?? "", new RegExp(`^no usable SVG after ${VISUAL_MAX_ATTEMPTS} attempts: the SVG does not parse`))
      assert.strictEqual(fake.chatRequests().length, VISUAL_MAX_ATTEMPTS)
    }))

  it.effect("an SVG that draws nothing is refused", () =>
    Effect.gen(function*() {
      const fake = yield* fresh
      fake.enqueue(
        FakeOpenAi.reply.toolCalls([call("write_svg", { svg: svg("") })]),
        FakeOpenAi.reply.toolCalls([call("write_svg", { svg: GOOD })]),
        FakeOpenAi.reply.text("ok")
      )
      yield* visual().pipe(withSettings(fake))
      assert.include(String(toolResults(fake, 1)[0]?.["error"]), "renders nothing visible")
    }))

  it.effect("JOB_VISUAL_VISION=0: the first good SVG is delivered without showing an image", () =>
    Effect.gen(function*() {
      const fake = yield* fresh
      fake.enqueue(FakeOpenAi.reply.toolCalls([call("write_svg", { svg: GOOD, notes: "Bar." })]))
      const { result } = yield* visual().pipe(withSettings(fake, false))
      assert.deepStrictEqual(result, { svg: GOOD, notes: "Bar." })
      assert.strictEqual(fake.chatRequests().length, 1)
    }))

  it.effect("a provider that refuses image input is asked again without the image", () =>
    Effect.gen(function*() {
      const fake = yield* fresh
      fake.enqueue(FakeOpenAi.reply.toolCalls([call("write_svg", { svg: GOOD })]))
      fake.respondWith((request) =>
        request.rawBody.includes("image_url")
          ? FakeOpenAi.reply.status(400, "this model does not support image input")
          : FakeOpenAi.reply.text("Delivered unseen.")
      )
      const { result } = yield* visual().pipe(withSettings(fake))
      assert.deepStrictEqual(result, { svg: GOOD, notes: "Delivered unseen." })
      assert.strictEqual(fake.chatRequests().length, 3)
      assert.include(String(wireMessages(fake, 2).at(-1)?.["content"]), "The image could not be shown")
    }))

  it.effect("a failing provider before any figure: the failure shape", () =>
    Effect.gen(function*() {
      const fake = yield* fresh
      fake.enqueue(FakeOpenAi.reply.status(503, "overloaded"))
      const { result } = yield* visual().pipe(withSettings(fake))
      assert.deepStrictEqual(result, { svg: "", notes: "the model provider failed (status_503)" })
    }))
})

describe("SVG safety scan", () => {
  it("refuses code, handlers, foreign content and external references however they are spelled", () => {
    const refused: Record<string, string> = {
      script: svg(`<script>alert(1)</script>`),
      upperScript: svg(`<SCRIPT>alert(1)</SCRIPT>`),
      prefixedScript: `<svg:svg xmlns:svg="http://www.w3.org/2000/svg"><svg:script>alert(1)</svg:script></svg:svg>`,
      onclick: svg(`<rect width="5" height="5" onClick="alert(1)"/>`),
      prefixedHandler: svg(`<rect width="5" height="5" ev:onload="alert(1)" xmlns:ev="http://www.w3.org/2001/xml-events"/>`),
      foreignObject: svg(`<foreignObject width="9" height="9"><div xmlns="http://www.w3.org/1999/xhtml">hi</div></foreignObject>`),
      externalHref: svg(`<a href="https://example.com"><rect width="5" height="5"/></a>`),
      javascriptHref: svg(`<a xlink:href="&#106;avascript:alert(1)"><rect width="5" height="5"/></a>`),
      externalUse: svg(`<use href="other.svg#icon"/>`),
      svgDataImage: svg(`<image href="data:image/svg+xml;base64,PHN2Zz4=" width="5" height="5"/>`),
      cssUrl: svg(`<rect width="5" height="5" style="fill: url('https://evil.example/p.svg#x')"/>`),
      presentationUrl: svg(`<rect width="5" height="5" fill="url(https://evil.example/p.svg#x)"/>`),
      styleImport: svg(`<style>@import url(#x); rect { fill: red }</style>`),
      styleUrl: svg(`<style><![CDATA[ rect { fill: url(http://evil.example/a) } ]]></style>`),
      animateHref: svg(`<a href="#x"><set attributeName="href" to="javascript:alert(1)"/></a>`),
      animateHandler: svg(`<rect width="5" height="5"><set attributeName="onclick" to="alert(1)"/></rect>`),
      entity: `<!DOCTYPE svg [<!ENTITY x "&#60;script&#62;alert(1)&#60;/script&#62;">]>${svg("&x;")}`,
      stylesheet: `<?xml-stylesheet href="https://evil.example/s.css"?>${svg(`<rect width="5" height="5"/>`)}`,
      notSvg: `<html><body>hi</body></html>`,
      iframe: svg(`<iframe src="https://example.com"/>`)
    }
    for (const [name, text] of Object.entries(refused)) {
      assert.isAbove(svgSafetyProblems(text).length, 0, name)
    }
  })

  it("lets a plain figure through: internal references, inline raster images, gradients", () => {
    const png = "data:image/png;base64,iVBORw0KGgo="
    const fine = svg(
      `<?xml version="1.0"?><defs><linearGradient id="g"/><path id="p" d="M0 0L9 9"/></defs>` +
        `<rect width="5" height="5" fill="url(#g)" style="stroke: url(#g)"/><use xlink:href="#p"/><use href="#p"/>` +
        `<image href="${png}" width="5" height="5"/><style>rect { fill: url("#g") }</style>` +
        `<a href="#p"><text>on the left, one = 1</text></a><animate attributeName="opacity" values="0;1" dur="1s"/>`
    )
    assert.deepStrictEqual(svgSafetyProblems(fine), [])
    assert.deepStrictEqual(svgSafetyProblems(GOOD), [])
  })

  it("renderSvg: a real PNG at the render width; unparseable or sizeless SVG is refused", () => {
    const rendered = renderSvg(GOOD)
    assert.strictEqual(rendered._tag, "Rendered")
    if (rendered._tag === "Rendered") {
      assert.strictEqual(rendered.png.subarray(1, 4).toString("latin1"), "PNG")
      assert.deepStrictEqual([rendered.width, rendered.height], [RENDER_WIDTH, RENDER_WIDTH / 2])
    }
    assert.match((renderSvg("<svg") as { problem: string }).problem, /^the SVG does not parse: /)
    assert.match((renderSvg(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 1000"><rect width="10" height="1000"/></svg>`) as { problem: string }).problem, /too tall/)
  })
})
