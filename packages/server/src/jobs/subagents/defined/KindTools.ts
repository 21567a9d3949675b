/**
 * The built-in tools a defined kind names (`tools: ["web_search", "fetch_url", "write_demo",
 * "write_svg"]`), as its sub-agent is offered them. The same services as the built-in kinds'
 * (the page fetcher's address policy, the search API, the headless browser, the SVG checks);
 * here `write_demo` and `write_svg` check a document and answer, they do not end the work: the
 * sub-agent puts what it made into its `submit_result`.
 */
import type { SubagentToolName } from "@switchboard/domain"
import { Effect, Schema } from "effect"
import { DEMO_MAX_HTML_BYTES } from "../demo/Demo.ts"
import type { HeadlessBrowser } from "../demo/HeadlessBrowser.ts"
import type { PageFetcher } from "../research/PageFetcher.ts"
import { FetchUrlArgs, pageForModel, WebSearchArgs } from "../research/Research.ts"
import type { WebSearch } from "../research/WebSearch.ts"
import { tool, ToolFailure } from "../ToolLoop.ts"
import type { SubagentTool } from "../ToolLoop.ts"
import { renderSvg } from "../visual/SvgRender.ts"
import { svgSafetyProblems } from "../visual/SvgSafety.ts"
import { VISUAL_MAX_SVG_BYTES } from "../visual/Visual.ts"

export interface KindToolDeps {
  /** Absent without `SEARCH_URL`: a kind that names `web_search` runs without it (its prompt is told). */
  readonly search: WebSearch | undefined
  readonly fetcher: PageFetcher
  readonly browser: HeadlessBrowser
}

const failure = (message: string) => new ToolFailure({ message })

const CheckDemoArgs = Schema.Struct({
  html: Schema.String.check(Schema.isMinLength(1)).annotate({ description: "The whole self-contained HTML document." })
})

const CheckSvgArgs = Schema.Struct({
  svg: Schema.String.check(Schema.isMinLength(1)).annotate({ description: "The whole SVG document." })
})

const makers: { readonly [K in SubagentToolName]: (deps: KindToolDeps) => SubagentTool | undefined } = {
  web_search: ({ search }) =>
    search === undefined ? undefined : tool({
      name: "web_search",
      description: "Search the web. Returns up to 8 results: title, url and a snippet of each.",
      args: WebSearchArgs,
      activity: ({ query }) => `web_search: ${JSON.stringify(query)}`,
      execute: ({ query }) =>
        search.search(query).pipe(Effect.mapError((e) => failure(e.message)), Effect.map((hits) => ({ result: { results: hits } })))
    }),
  fetch_url: ({ fetcher }) =>
    tool({
      name: "fetch_url",
      description: "Fetch one web page (http or https) and return its readable text.",
      args: FetchUrlArgs,
      activity: ({ url }) => `fetch_url: ${url}`,
      execute: ({ url }) => fetcher.fetch(url).pipe(Effect.mapError((e) => failure(e.message)), Effect.map((page) => ({ result: pageForModel(page) })))
    }),
  write_demo: ({ browser }) =>
    tool({
      name: "write_demo",
      description: "Test a complete self-contained HTML document in a headless browser: answers passed, or its problems.",
      args: CheckDemoArgs,
      activity: () => "write_demo: testing the document in headless Chromium",
      execute: ({ html }) =>
        Buffer.byteLength(html) > DEMO_MAX_HTML_BYTES
          ? Effect.fail(failure(`the document is larger than ${DEMO_MAX_HTML_BYTES} bytes: make it smaller`))
          : browser.check(html).pipe(
            Effect.mapError((e) => failure(e.message)),
            Effect.flatMap(({ problems }) =>
              problems.length === 0
                ? Effect.succeed({ result: { status: "passed", message: "The document loaded with no errors." } })
                : Effect.fail(failure(`the document failed its headless test:\n- ${problems.join("\n- ")}`))
            )
          )
    }),
  write_svg: () =>
    tool({
      name: "write_svg",
      description: "Check a complete SVG document: safe to show inline, parses and draws something.",
      args: CheckSvgArgs,
      activity: () => "write_svg: checking the figure",
      execute: ({ svg }) => {
        if (Buffer.byteLength(svg) > VISUAL_MAX_SVG_BYTES) return Effect.fail(failure(`the SVG is larger than ${VISUAL_MAX_SVG_BYTES} bytes`))
        const unsafe = svgSafetyProblems(svg)
        if (unsafe.length > 0) return Effect.fail(failure(`the SVG must not carry code or external references: ${unsafe.join("; ")}`))
        const render = renderSvg(svg)
        return render._tag === "Refused"
          ? Effect.fail(failure(render.problem))
          : Effect.succeed({ result: { status: "valid", width: render.width, height: render.height } })
      }
    })
}

/** The tools of `names` this server can offer (`web_search` only with `SEARCH_URL`), and the names it cannot. */
export const kindTools = (names: ReadonlyArray<SubagentToolName>, deps: KindToolDeps) => {
  const tools: Array<SubagentTool> = []
  const missing: Array<SubagentToolName> = []
  for (const name of names) {
    const made = makers[name](deps)
    if (made === undefined) missing.push(name)
    else tools.push(made)
  }
  return { tools, missing }
}
