/**
 * The sub-agents' own tools, declared once by their argument schemas: the
 * parameter lists and JSON Schemas a provider is offered (recorded from the
 * first call of each sub-agent) are the ones that used to be written by hand,
 * pinned below as they were. Where the derivation differs from the old text,
 * the difference is spelled out next to the old value.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { ToolSchema } from "@switchboard/domain"
import { toolInputSchema } from "@switchboard/providers"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { runDemo } from "../../../src/jobs/subagents/demo/Demo.ts"
import { runResearch } from "../../../src/jobs/subagents/research/Research.ts"
import { runVisual } from "../../../src/jobs/subagents/visual/Visual.ts"

const quiet = () => Effect.void

/** The tools each sub-agent offers on its first call (the fake model answers in prose: one round). */
const offered = Effect.gen(function*() {
  const fake = makeFakeProvider()
  const first = (run: Effect.Effect<unknown, never, any>) =>
    Effect.gen(function*() {
      const from = fake.calls.length
      yield* Effect.provide(run, fake.layer)
      return fake.calls[from]!.toolSchemas ?? []
    })
  const research = yield* first(runResearch({
    search: { search: () => Effect.succeed([]) },
    fetcher: { fetch: () => Effect.die("not fetched") },
    model: undefined
  }, { question: "q" }, quiet))
  const demo = yield* first(runDemo({
    browser: { available: Effect.void, check: () => Effect.succeed({ problems: [] }) },
    model: undefined
  }, { title: "t", brief: "b" }, quiet))
  const visual = yield* first(runVisual({ model: undefined, vision: false }, { brief: "b" }, quiet))
  return new Map<string, ToolSchema>([...research, ...demo, ...visual].map((tool) => [tool.name, tool]))
})

const string = (description: string) => ({ type: "string", description })

describe("sub-agent tools declared once", () => {
  it.effect("each offers the parameters and the JSON Schema it had", () =>
    Effect.gen(function*() {
      const tools = yield* offered
      assert.deepStrictEqual([...tools.keys()], ["web_search", "fetch_url", "submit_brief", "write_demo", "write_svg"])
      // What each flat tool was, as written by hand: its parameters, and the JSON Schema providers got from them.
      const flatTools = {
        web_search: [
          [{ key: "query", type: "string", required: true, description: "The search query." }],
          { properties: { query: string("The search query.") }, required: ["query"] }
        ],
        fetch_url: [
          [{ key: "url", type: "string", required: true, description: "The page's URL." }],
          { properties: { url: string("The page's URL.") }, required: ["url"] }
        ],
        write_demo: [
          [
            { key: "html", type: "string", required: true, description: "The whole self-contained HTML document." },
            { key: "notes", type: "string", required: false, description: "What the demo shows; its controls by name." }
          ],
          {
            properties: {
              html: string("The whole self-contained HTML document."),
              notes: string("What the demo shows; its controls by name.")
            },
            required: ["html"]
          }
        ],
        write_svg: [
          [
            { key: "svg", type: "string", required: true, description: "The whole SVG document." },
            { key: "notes", type: "string", required: false, description: "The figure's elements, for the teacher." }
          ],
          { properties: { svg: string("The whole SVG document."), notes: string("The figure's elements, for the teacher.") }, required: ["svg"] }
        ]
      } as const
      for (const [name, [parameters, { properties, required }]] of Object.entries(flatTools)) {
        const tool = tools.get(name)!
        assert.deepStrictEqual(tool.parameters, parameters, name)
        assert.isUndefined(tool.inputSchema, name)
        assert.strictEqual(
          JSON.stringify(toolInputSchema(tool)),
          JSON.stringify({ type: "object", properties, required, additionalProperties: false }),
          name
        )
      }

      const submit = tools.get("submit_brief")!
      // It was written as its JSON Schema with an empty parameter list; the list is derived now too (the
      // JSON Schema, which the list cannot say, is what providers are sent either way).
      assert.deepStrictEqual(submit.parameters, [
        { key: "brief", type: "string", required: true, description: "The research brief." },
        {
          key: "sources",
          type: "array",
          required: true,
          description: "The sources the brief relies on: URLs from web_search results or fetch_url."
        }
      ])
      const submitBefore = {
        type: "object",
        properties: {
          brief: { type: "string", description: "The research brief." },
          sources: {
            type: "array",
            description: "The sources the brief relies on: URLs from web_search results or fetch_url.",
            items: {
              type: "object",
              properties: { title: { type: "string" }, url: { type: "string" } },
              required: ["url"]
            }
          }
        },
        required: ["brief", "sources"]
      }
      // The one difference: like every tool's, its top-level object is closed now (it was the only open one).
      assert.strictEqual(JSON.stringify(toolInputSchema(submit)), JSON.stringify({ ...submitBefore, additionalProperties: false }))
    }))
})
