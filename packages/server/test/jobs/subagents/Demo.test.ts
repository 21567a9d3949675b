/**
 * The demo sub-agent with a real headless Chromium (Debian's `chromium`,
 * which `.ci/run` installs when it is missing) and the fake LLM scripted call
 * by call. One sub-agents layer, so one browser, for the file's demos.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { DemoResult } from "@switchboard/domain"
import { isSubagentFailure } from "@switchboard/domain"
import { DEMO_MAX_FIXES } from "../../../src/jobs/subagents/demo/Demo.ts"
import { FakeOpenAi, FakeOpenAiServer } from "@switchboard/providers/testing"
import * as FakeWeb from "../../support/FakeWeb.ts"
import { call, offeredTools, runJob, settings, subagentsFor, toolResults } from "./Harness.ts"

const page = (script: string, body = `<h1>Pendulum</h1><label>Length <input id="len" type="range"></label>`) =>
  `<!doctype html><html><head><style>body{font:16px sans-serif}</style></head><body>${body}<script>${script}</script></body></html>`

const GOOD = page(`document.getElementById("len").addEventListener("input", (e) => { document.title = e.target.value })`)
const BROKEN = page(`console.error("boom: slider missing"); document.getElementById("nope").value = 1`)

const demo = (title = "Pendulum", brief = "A pendulum whose length is set with a slider.") =>
  runJob<DemoResult>("demo", { title, brief })

const Env = Layer.unwrap(Effect.gen(function*() {
  return subagentsFor(yield* FakeOpenAiServer, settings())
})).pipe(
  Layer.provideMerge(FakeOpenAiServer.layer())
)

layer(Env, { excludeTestServices: true })("demo sub-agent (headless Chromium)", (it) => {
  const fresh = Effect.gen(function*() {
    const fake = yield* FakeOpenAiServer
    fake.reset()
    return fake
  })

  it.effect("a page that loads cleanly is delivered, tested", () =>
    Effect.gen(function*() {
      const fake = yield* fresh
      fake.enqueue(FakeOpenAi.reply.toolCalls([call("write_demo", { html: GOOD, notes: "Drag the Length slider." })]))

      const { activity, result } = yield* demo()

      assert.deepStrictEqual(result, { title: "Pendulum", html: GOOD, tested: true, notes: "Drag the Length slider." })
      assert.deepStrictEqual(activity, [`write_demo: testing "Pendulum" in headless Chromium (attempt 1)`])
      assert.deepStrictEqual(offeredTools(fake, 0), ["write_demo"])
      assert.strictEqual((fake.chatRequests()[0]?.body as { model: string }).model, "demo-model")
      assert.strictEqual(fake.chatRequests().length, 1, "a passing test ends the work")
    }))

  it.effect("a page with a console error goes back to the builder and is fixed on the second try", () =>
    Effect.gen(function*() {
      const fake = yield* fresh
      fake.enqueue(
        FakeOpenAi.reply.toolCalls([call("write_demo", { html: BROKEN })]),
        FakeOpenAi.reply.toolCalls([call("write_demo", { html: GOOD })])
      )

      const { activity, result } = yield* demo()

      const error = String(toolResults(fake, 1)[0]?.["error"])
      assert.include(error, `the demo failed its headless test (attempt 1 of ${DEMO_MAX_FIXES + 1})`)
      assert.include(error, "console error: boom: slider missing")
      assert.include(error, "uncaught TypeError: Cannot set properties of null")
      assert.deepStrictEqual(result, { title: "Pendulum", html: GOOD, tested: true })
      assert.deepStrictEqual(activity.map((line) => line.slice(-11)), ["(attempt 1)", "(attempt 2)"])
    }))

  it.effect("its controls are exercised: a handler that throws goes back to the builder", () =>
    Effect.gen(function*() {
      const fake = yield* fresh
      const clumsy = page(
        `document.getElementById("go").addEventListener("click", () => { window.simulation.start() })`,
        `<h1>Pendulum</h1><button id="go">Start</button><button>Reset</button><select><option>slow</option><option>fast</option></select>`
      )
      fake.enqueue(
        FakeOpenAi.reply.toolCalls([call("write_demo", { html: clumsy })]),
        FakeOpenAi.reply.toolCalls([call("write_demo", { html: GOOD })])
      )

      const { result } = yield* demo()

      const error = String(toolResults(fake, 1)[0]?.["error"])
      assert.include(error, "uncaught TypeError: Cannot read properties of undefined (reading 'start') (while the controls were exercised)")
      assert.include(error, "controls exercised: #go, Reset, select")
      assert.deepStrictEqual(result, { title: "Pendulum", html: GOOD, tested: true })
    }))

  it.effect("the network is blocked for the page; a builder that never fixes it ends in the failure shape", () =>
    Effect.gen(function*() {
      const fake = yield* fresh
      const web = yield* FakeWeb.scoped
      web.page("/lib.js", { type: "text", status: 200, contentType: "text/javascript", body: "window.lib = 1" })
      const fetching = page(
        `fetch(${JSON.stringify(web.pageUrl("/api"))}).catch(() => {})`,
        `<h1>Chart</h1><script src="${web.pageUrl("/lib.js")}"></script><img src="${web.pageUrl("/logo.png")}">`
      )
      fake.respondWith(() => FakeOpenAi.reply.toolCalls([call("write_demo", { html: fetching })]))

      const { result } = yield* demo("Chart", "A chart.")

      assert.deepStrictEqual(web.pageRequests(), [], "nothing the page asked for left the browser")
      const error = String(toolResults(fake, 1)[0]?.["error"])
      for (const path of ["/lib.js", "/logo.png", "/api"]) {
        assert.include(error, `network request blocked: ${web.pageUrl(path)} (the demo must be self-contained`)
      }
      assert.strictEqual(fake.chatRequests().length, DEMO_MAX_FIXES + 1, "a bounded number of fixes")
      assert.isTrue(isSubagentFailure("demo", result))
      assert.strictEqual(result.tested, false)
      assert.match(result.notes ?? "", new RegExp(`^the demo still failed its headless test after ${DEMO_MAX_FIXES + 1} attempts: `))
    }))

  it.effect("a page that renders nothing, or stops responding after it loads, is not a demo", () =>
    Effect.gen(function*() {
      const fake = yield* fresh
      fake.enqueue(
        FakeOpenAi.reply.toolCalls([call("write_demo", { html: "<!doctype html><html><body></body></html>" })]),
        FakeOpenAi.reply.toolCalls([call("write_demo", { html: page(`setTimeout(() => { for (;;) {} }, 20)`) })]),
        FakeOpenAi.reply.toolCalls([call("write_demo", { html: GOOD })])
      )
      const { result } = yield* demo()
      assert.include(String(toolResults(fake, 1)[0]?.["error"]), "the page renders nothing visible")
      assert.include(String(toolResults(fake, 2)[1]?.["error"]), "the page stopped responding after it loaded")
      assert.isTrue(result.tested)
    }))
})

describe("demo sub-agent without a browser", () => {
  layer(FakeOpenAiServer.layer(), { excludeTestServices: true })("", (it) => {
    it.effect("no executable at CHROMIUM_PATH: the failure shape, notes saying why, no model call", () =>
      Effect.gen(function*() {
        const fake = yield* FakeOpenAiServer
        fake.reset()
        const { result } = yield* demo().pipe(
          Effect.provide(subagentsFor(fake, settings({ chromiumPath: "/nonexistent/chromium" })))
        )
        assert.deepStrictEqual(result, {
          title: "Pendulum",
          html: "",
          tested: false,
          notes: "no headless browser: nothing executable at /nonexistent/chromium (install Chromium or set CHROMIUM_PATH)"
        })
        assert.isTrue(isSubagentFailure("demo", result))
        assert.strictEqual(fake.chatRequests().length, 0)
      }))

    it.effect("a CHROMIUM_PATH that is no browser: the failure shape once the builder's page cannot be tested", () =>
      Effect.gen(function*() {
        const fake = yield* FakeOpenAiServer
        fake.reset()
        fake.enqueue(FakeOpenAi.reply.toolCalls([call("write_demo", { html: GOOD })]))
        const { result } = yield* demo().pipe(Effect.provide(subagentsFor(fake, settings({ chromiumPath: "/bin/false" }))))
        assert.isTrue(isSubagentFailure("demo", result))
        assert.match(result.notes ?? "", /^the headless browser at \/bin\/false failed to start: /)
      }))
  })
})
