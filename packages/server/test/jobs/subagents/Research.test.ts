/**
 * The research sub-agent against local servers: the fake LLM (scripted call
 * by call), a SearXNG-style search API and the pages it points to. Live
 * clock: real sockets.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { ResearchResult } from "@switchboard/domain"
import { isSubagentFailure } from "@switchboard/domain"
import { BRIEF_LIMIT, noSearchNote } from "../../../src/jobs/subagents/research/Research.ts"
import { FakeOpenAi } from "@switchboard/providers/testing"
import * as FakeWeb from "../../support/FakeWeb.ts"
import { call, offeredTools, runJob, settings, subagentsFor, toolResults, wireMessages } from "./Harness.ts"

const SIGMA_PAGE = FakeWeb.html(
  "Sigma.js v3 is out",
  `<nav>Home | Blog | Contact</nav>
   <article>
     <h1>Sigma.js v3</h1>
     <p>Sigma.js version 3 ships a new WebGL renderer and first-class TypeScript types.</p>
     <p>It draws graphs of tens of thousands of nodes, with graphology as its data model.</p>
     <script>window.tracker = "SECRET-TRACKING-CODE"</script>
   </article>
   <footer>© the authors</footer>`
)

const research = (question: string, context?: string) =>
  runJob<ResearchResult>("research", context === undefined ? { question } : { question, context })

describe("research sub-agent", () => {
  it.live("search → fetch → brief whose sources are only URLs it was given or fetched", () =>
    Effect.gen(function*() {
      const fake = yield* FakeOpenAi.scoped()
      const web = yield* FakeWeb.scoped
      web.page("/sigma", SIGMA_PAGE)
      web.results([
        { title: "Sigma.js v3 is out", url: web.pageUrl("/sigma"), content: "Release notes" },
        { title: "Graphology", url: web.pageUrl("/graphology"), content: "The data model" }
      ])
      fake.enqueue(
        FakeOpenAi.reply.toolCalls([call("web_search", { query: "sigma.js v3" })]),
        FakeOpenAi.reply.toolCalls([call("fetch_url", { url: web.pageUrl("/sigma") })]),
        FakeOpenAi.reply.toolCalls([call("submit_brief", {
          brief: "Sigma.js v3 renders with WebGL and ships TypeScript types.",
          sources: [
            { title: "Release notes", url: web.pageUrl("/sigma") },
            { url: web.pageUrl("/graphology") },
            { title: "Invented", url: "https://made-up.example/never-seen" },
            { title: "Duplicate", url: `${web.pageUrl("/sigma")}#intro` }
          ]
        })])
      )

      const { activity, result } = yield* research("What is new in sigma.js v3?", "a lesson on graph rendering").pipe(
        Effect.provide(subagentsFor(fake, settings({ searchUrl: web.origin })))
      )

      assert.strictEqual(result.brief, "Sigma.js v3 renders with WebGL and ships TypeScript types.")
      assert.deepStrictEqual(result.sources, [
        { title: "Release notes", url: web.pageUrl("/sigma") },
        { title: "Graphology", url: web.pageUrl("/graphology") }
      ])
      assert.isFalse(isSubagentFailure("research", result))
      assert.deepStrictEqual(web.searches(), ["sigma.js v3"])
      assert.deepStrictEqual(web.pageRequests(), ["/sigma"])
      assert.deepStrictEqual(activity, [
        `web_search: "sigma.js v3"`,
        `fetch_url: ${web.pageUrl("/sigma")}`,
        "submit_brief: writing the brief"
      ])

      // An isolated context: its own system prompt and the question, nothing of any chat; its own tools and model.
      const first = wireMessages(fake, 0)
      assert.deepStrictEqual(first.map((m) => m["role"]), ["system", "user"])
      assert.include(String(first[1]?.["content"]), "What is new in sigma.js v3?")
      assert.include(String(first[1]?.["content"]), "a lesson on graph rendering")
      assert.deepStrictEqual(offeredTools(fake, 0), ["web_search", "fetch_url", "submit_brief"])
      assert.strictEqual((fake.chatRequests()[0]?.body as { model: string }).model, "research-model")

      // The model read the search hits, then the page as readable text: no markup, no script, no navigation.
      const [hits] = toolResults(fake, 1)
      assert.strictEqual(((hits?.["result"] as { results: Array<unknown> }).results).length, 2)
      const page = toolResults(fake, 2)[1]?.["result"] as { title: string; text: string }
      assert.strictEqual(page.title, "Sigma.js v3 is out")
      assert.include(page.text, "Sigma.js version 3 ships a new WebGL renderer")
      assert.include(page.text, "graphology as its data model")
      assert.notInclude(page.text, "<p>")
      assert.notInclude(page.text, "SECRET-TRACKING-CODE")
    }))

  it.live("without SEARCH_URL: no web_search, and the brief says it comes from the model alone", () =>
    Effect.gen(function*() {
      const fake = yield* FakeOpenAi.scoped()
      fake.enqueue(FakeOpenAi.reply.text("Sigma.js is a WebGL graph renderer."))

      const { result } = yield* research("What is sigma.js?").pipe(Effect.provide(subagentsFor(fake, settings())))

      assert.deepStrictEqual(offeredTools(fake, 0), ["fetch_url", "submit_brief"])
      assert.include(String(wireMessages(fake, 0)[0]?.["content"]), "No web search is available")
      assert.strictEqual(result.brief, `${noSearchNote}.\n\nSigma.js is a WebGL graph renderer.`)
      assert.deepStrictEqual(result.sources, [])
      assert.isFalse(isSubagentFailure("research", result))
    }))

  it.live("a runaway brief is cut at the limit, saying so", () =>
    Effect.gen(function*() {
      const fake = yield* FakeOpenAi.scoped()
      const web = yield* FakeWeb.scoped
      fake.enqueue(FakeOpenAi.reply.toolCalls([call("submit_brief", { brief: "a".repeat(BRIEF_LIMIT + 500), sources: [] })]))
      const { result } = yield* research("q").pipe(Effect.provide(subagentsFor(fake, settings({ searchUrl: web.origin }))))
      assert.strictEqual(result.brief, `${"a".repeat(BRIEF_LIMIT)}\n[brief cut at ${BRIEF_LIMIT} characters]`)
    }))

  it.live("a plain-text answer keeps as sources only the seen URLs it cites", () =>
    Effect.gen(function*() {
      const fake = yield* FakeOpenAi.scoped()
      const web = yield* FakeWeb.scoped
      web.page("/sigma", SIGMA_PAGE)
      web.results([{ title: "Sigma", url: web.pageUrl("/sigma"), content: "" }])
      fake.enqueue(
        FakeOpenAi.reply.toolCalls([call("web_search", { query: "sigma" })]),
        FakeOpenAi.reply.text(`Sigma v3 uses WebGL (${web.pageUrl("/sigma")}), says https://invented.example/x.`)
      )

      const { result } = yield* research("sigma?").pipe(Effect.provide(subagentsFor(fake, settings({ searchUrl: web.origin }))))

      assert.deepStrictEqual(result.sources, [{ title: "Sigma", url: web.pageUrl("/sigma") }])
    }))

  it.live("fetch_url refuses a private address after DNS resolution; the model reads the refusal and goes on", () =>
    Effect.gen(function*() {
      const fake = yield* FakeOpenAi.scoped()
      const web = yield* FakeWeb.scoped
      web.page("/admin", FakeWeb.html("Internal", "<p>internal secrets</p>"))
      fake.enqueue(
        FakeOpenAi.reply.toolCalls([call("fetch_url", { url: `http://localhost:${web.port}/admin` })]),
        FakeOpenAi.reply.toolCalls([call("fetch_url", { url: `http://intranet.test:${web.port}/admin` })]),
        FakeOpenAi.reply.toolCalls([call("submit_brief", {
          brief: "Could not read the page.",
          sources: [{ url: `http://localhost:${web.port}/admin` }]
        })])
      )
      const config = settings({ fetchAllowPrivate: false })
      // A name that resolves to loopback, as a rebinding attacker's would.
      const resolve = (host: string) =>
        Promise.resolve(host === "intranet.test" ? [{ address: "127.0.0.1", family: 4 }] : [{ address: "::1", family: 6 }])

      const { result } = yield* research("what is on the admin page?").pipe(
        Effect.provide(subagentsFor(fake, config, { fetch: { resolve } }))
      )

      assert.deepStrictEqual(web.pageRequests(), [], "no request reached the private server")
      assert.match(String(toolResults(fake, 1)[0]?.["error"]), /^refused: localhost resolves to ::1, a private/)
      assert.match(String(toolResults(fake, 2)[1]?.["error"]), /^refused: intranet\.test resolves to 127\.0\.0\.1, a private/)
      assert.deepStrictEqual(result.sources, [], "a refused URL is no source")
    }))

  it.live("a search API that is down or answers garbage is a tool error the model reads", () =>
    Effect.gen(function*() {
      const fake = yield* FakeOpenAi.scoped()
      const web = yield* FakeWeb.scoped
      const down = `http://127.0.0.1:${yield* Effect.promise(FakeOpenAi.closedPort)}`
      fake.enqueue(
        FakeOpenAi.reply.toolCalls([call("web_search", { query: "anything" })]),
        FakeOpenAi.reply.text("No search today.")
      )
      const first = yield* research("q").pipe(Effect.provide(subagentsFor(fake, settings({ searchUrl: down }))))
      assert.match(String(toolResults(fake, 1)[0]?.["error"]), /^the search API is unreachable: /)
      assert.deepStrictEqual(first.result, { brief: "No search today.", sources: [] })

      fake.reset()
      web.page("/api/search?q=anything&format=json", FakeWeb.reply.garbage())
      fake.enqueue(
        FakeOpenAi.reply.toolCalls([call("web_search", { query: "anything" })]),
        FakeOpenAi.reply.text("Still nothing.")
      )
      yield* research("q").pipe(Effect.provide(subagentsFor(fake, settings({ searchUrl: `${web.origin}/api` }))))
      assert.strictEqual(toolResults(fake, 1)[0]?.["error"], "the search API answered something that is not JSON")
    }))

  it.live("a failing provider ends in the failure shape: Research failed, no sources", () =>
    Effect.gen(function*() {
      const fake = yield* FakeOpenAi.scoped()
      fake.enqueue(FakeOpenAi.reply.status(500, "upstream exploded"))

      const { result } = yield* research("anything").pipe(Effect.provide(subagentsFor(fake, settings())))

      assert.match(result.brief, /^Research failed: the model provider failed \(status_500\)/)
      assert.deepStrictEqual(result.sources, [])
      assert.isTrue(isSubagentFailure("research", result))
    }))

  it.live("a model that never submits ends at the round cap in the failure shape", () =>
    Effect.gen(function*() {
      const fake = yield* FakeOpenAi.scoped()
      const web = yield* FakeWeb.scoped
      fake.respondWith(() => FakeOpenAi.reply.toolCalls([call("web_search", { query: "again" })]))

      const { result } = yield* research("loop forever").pipe(
        Effect.provide(subagentsFor(fake, settings({ searchUrl: web.origin })))
      )

      assert.match(result.brief, /^Research failed: no brief after \d+ rounds/)
      assert.isTrue(isSubagentFailure("research", result))
      assert.strictEqual(fake.chatRequests().length, web.searches().length)
    }))
})
