/**
 * The chat's sub-agents in Chromium against the built server (ConsoleHarness): the scripted
 * provider plays both the chat and the sub-agents (a script written here), the research
 * sub-agent searches and reads the README's local search server (examples/search-server.ts), the demo builder's page is tested by the server's
 * own headless Chromium, the figure is rendered by resvg. Each chat's first turn goes through the
 * API; the browser opens `/chats/{chatId}`, where the chat page renders the jobs views
 * (packages/web/src/jobs/JobViews.tsx).
 *
 * - research: the dispatch card's live activity, a reload while the job runs (the chat comes back
 *   from the server), then the result card with its sources, the wake answer, the quiet one-liner
 *   and the sub-agents panel — the steer exactly once;
 * - demo and figure: the demo runs in `sandbox="allow-scripts"` (exactly) and its probes of the
 *   console — `parent.document`, `localStorage`, `document.cookie`, navigating the top window —
 *   all fail; the SVG is an image with a download;
 * - kinds of the operator's own (`PUT /admin/subagents/{kind}`, an agent naming them): their calls
 *   are dispatch cards, one result is the generic card — the readable tree of what the sub-agent
 *   submitted — and the other's `{ error }` its failure card.
 *
 * axe-core on each state, screenshots at 375 and 1440 px in light and dark.
 */
import { newChatId, newMessageId } from "@switchboard/client"
import { spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import type { Browser, Page } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import {
  expectNoSeriousAxeViolations,
  launchBrowser,
  newPage,
  screenshot,
  SCREENSHOTS_DIR,
  startConsoleServer
} from "./support/ConsoleHarness.ts"
import type { ConsoleServer } from "./support/ConsoleHarness.ts"

/** Each research step of the sub-agent takes this long: time to watch it, and to reload meanwhile. */
const STEP_MS = 3_000

/**
 * The demo's page: each probe of what the sandbox must deny is tried, its outcome written into the
 * page (`#probe-<name>`, `data-outcome` "blocked" or "allowed"). The top window is only navigated
 * from inside a frame: the builder's own headless test loads the page as the top document.
 */
const DEMO_HTML = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sandbox probe</title>
<style>body{font-family:sans-serif;margin:1rem;color:#123}li[data-outcome=blocked]{color:#063}</style></head>
<body><h1>Sandbox probe</h1><ul id="out"></ul>
<script>
var out = document.getElementById("out");
function probe(name, run) {
  var li = document.createElement("li");
  li.id = "probe-" + name;
  try { var value = run(); li.dataset.outcome = "allowed"; li.textContent = name + ": allowed " + String(value).slice(0, 60); }
  catch (e) { li.dataset.outcome = "blocked"; li.textContent = name + ": blocked (" + e.name + ")"; }
  out.appendChild(li);
}
probe("parent-document", function () { return parent.document.title; });
probe("local-storage", function () { return localStorage.getItem("chat-store"); });
probe("cookie", function () { return document.cookie; });
if (window.top !== window) probe("top-navigation", function () { top.location.href = "/?escaped=1"; return "asked"; });
document.body.dataset.done = "yes";
</script></body></html>`

const ADMIN_TOKEN = "jobs-test-admin-token"

/** What the `digest` sub-agent submits (its kind's result schema below). */
const DIGEST = {
  headline: "Sigma.js v3 draws graphs with WebGL",
  summary: "## In short\n\nSigma.js v3 renders **every node type** with its own WebGL program.\n\n- Written in `TypeScript`\n- Faster on large graphs",
  points: ["One program per node type", "Edges drawn in one pass"],
  sources: [{ title: "Sigma.js v3: what changed", url: "https://example.com/sigma-v3" }],
  confidence: 0.8
}

const DIGEST_KIND = {
  description: "Digest a topic into a headline, a summary and its key points.",
  input: [{ key: "topic", type: "string", required: true, description: "What to digest" }],
  systemPrompt: "You digest {{input.topic}} for a busy reader.",
  result: {
    type: "object",
    required: ["headline", "summary", "points"],
    properties: {
      headline: { type: "string" },
      summary: { type: "string" },
      points: { type: "array", items: { type: "string" } },
      sources: { type: "array", items: { type: "object", properties: { title: { type: "string" }, url: { type: "string" } } } },
      confidence: { type: "number" }
    }
  },
  maxSteps: 3
}

/** A kind whose sub-agent never submits: its job ends in `{ error }`. */
const FLAKY_KIND = {
  description: "Looks into a subject, and gives up.",
  input: [{ key: "subject", type: "string", required: true }],
  systemPrompt: "Look into {{input.subject}}.",
  result: { type: "object", required: ["answer"], properties: { answer: { type: "string" } } },
  maxSteps: 2
}

const SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 200 100" width="400" height="200">` +
  `<rect x="10" y="10" width="180" height="60" rx="8" fill="#3366cc"/>` +
  `<text x="20" y="92" font-family="sans-serif" font-size="14" fill="#222222">Queue</text></svg>`

/** One script for the chat and every sub-agent; rules are tried in order, on the last message. */
const script = (web: string) => ({
  description: "packages/web/test/Jobs.test.ts: the chat dispatches research, or a demo and a figure; the sub-agents do their part.",
  rules: [
    // Kinds of the operator's own: the wake turns, their sub-agents (`submit_result`, or giving up), the dispatch.
    { when: { lastRole: "user", contains: "digest sub-agent finished" }, reply: { content: "The digest is in: the headline says it all." } },
    { when: { lastRole: "user", contains: "flaky sub-agent failed" }, reply: { content: "The flaky helper gave up; the digest is enough." } },
    { when: { lastRole: "user", contains: "WebGL graph rendering" }, reply: { content: "", toolCalls: [{ name: "submit_result", args: DIGEST }], delayMs: STEP_MS } },
    { when: { lastRole: "user", contains: "nothing in particular" }, reply: { content: "I would rather not submit anything." } },
    { when: { tool: "flaky" }, reply: { content: "A digester and a flaky helper are on it." } },
    {
      when: { lastRole: "user", contains: "please digest" },
      reply: {
        content: "",
        toolCalls: [
          { name: "digest", args: { topic: "WebGL graph rendering" } },
          { name: "flaky", args: { subject: "nothing in particular" } }
        ]
      }
    },
    // The chat's wake turns, answering each steer.
    { when: { lastRole: "user", contains: "Research complete" }, reply: { content: "The researcher is back: sigma.js v3 draws with WebGL." } },
    { when: { lastRole: "user", contains: "is built" }, reply: { content: "The demo is in: try it above." } },
    { when: { lastRole: "user", contains: "figure is drawn" }, reply: { content: "The figure is in: the bar is the queue." } },
    // The research sub-agent: search, read the page, answer with the brief.
    { when: { lastRole: "user", contains: "Question:" }, reply: { content: "", toolCalls: [{ name: "web_search", args: { query: "sigma.js v3" } }] } },
    {
      when: { tool: "web_search" },
      reply: { content: "", toolCalls: [{ name: "fetch_url", args: { url: `${web}/pages/sigma-v3` } }], delayMs: STEP_MS }
    },
    {
      when: { tool: "fetch_url" },
      reply: {
        content: "## Sigma.js v3\n\n- Renders with **WebGL** programs per node type.\n- Written in `TypeScript`.\n\nSee [the release notes](" +
          `${web}/pages/sigma-v3` + ").",
        delayMs: STEP_MS
      }
    },
    // The demo builder (its task names the demo's title; before the figure's rule: it has a Brief: too).
    { when: { lastRole: "user", contains: "Demo title:" }, reply: { content: "", toolCalls: [{ name: "write_demo", args: { html: DEMO_HTML, notes: "Probes what the sandbox denies." } }] } },
    { when: { tool: "write_demo" }, reply: { content: "Probes what the sandbox denies." } },
    // The visual maker.
    { when: { lastRole: "user", contains: "Brief:" }, reply: { content: "", toolCalls: [{ name: "write_svg", args: { svg: SVG, notes: "A blue bar labelled Queue." } }] } },
    { when: { tool: "write_svg" }, reply: { content: "A blue bar labelled Queue." } },
    // The chat's turns: dispatch, then say so.
    { when: { tool: "research" }, reply: { content: "I have sent a researcher off; its brief will arrive here." } },
    { when: { tool: "visual" }, reply: { content: "A builder and a figure maker are on it." } },
    {
      when: { lastRole: "user", contains: "please research" },
      reply: { content: "", toolCalls: [{ name: "research", args: { question: "What is new in sigma.js v3?" } }] }
    },
    {
      when: { lastRole: "user", contains: "demo and a figure" },
      reply: {
        content: "",
        toolCalls: [
          { name: "demo", args: { title: "Sandbox probe", brief: "A page that lists what it may reach." } },
          { name: "visual", args: { brief: "A queue drawn as a bar with a label." } }
        ]
      }
    }
  ],
  fallback: { content: "(no rule)" }
})

/** examples/search-server.ts on a free port (as its own test runs it): its origin, and the process. */
const startSearchServer = () =>
  new Promise<{ origin: string; child: ChildProcess }>((done, fail) => {
    const child = spawn(process.execPath, [resolve(import.meta.dirname, "../../../examples/search-server.ts")], {
      env: { ...process.env, PORT: "0" },
      stdio: ["ignore", "pipe", "inherit"]
    })
    child.once("error", fail)
    child.once("exit", (code) => fail(new Error(`examples/search-server.ts exited (${code})`)))
    child.stdout!.on("data", (chunk: Buffer) => {
      const origin = /search server on (http:\/\/127\.0\.0\.1:\d+)/.exec(chunk.toString())?.[1]
      if (origin !== undefined) done({ origin, child })
    })
  })

let search: { origin: string; child: ChildProcess } | undefined
let web: string
let dir: string
let server: ConsoleServer
let browser: Browser
let page: Page

beforeAll(async () => {
  search = await startSearchServer()
  web = search.origin
  dir = mkdtempSync(join(tmpdir(), "switchboard-jobs-test-"))
  const scriptPath = join(dir, "script.json")
  writeFileSync(scriptPath, JSON.stringify(script(web)))
  ;[server, browser] = await Promise.all([
    startConsoleServer({ LLM_SCRIPT: scriptPath, SEARCH_URL: web, FETCH_ALLOW_PRIVATE: "1", JOB_VISUAL_VISION: "0", ADMIN_TOKEN }),
    launchBrowser()
  ])
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
  search?.child.kill()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

/** A chat's first turn, through the API: the job calls are the server's, answered at once. */
const startChat = async (text: string, agent?: string): Promise<string> => {
  const chatId = newChatId()
  const response = await fetch(`${server.url}/api/agent/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      chatId,
      ...(agent === undefined ? {} : { agent }),
      messages: [{ id: newMessageId(), role: "user", content: text, timestamp: Date.now() }]
    })
  })
  assert.strictEqual(response.status, 200, await response.clone().text())
  return chatId
}

/** An operator's write (`PUT /admin/…`), with the admin token. */
const adminPut = async (path: string, body: unknown) => {
  const response = await fetch(`${server.url}${path}`, {
    method: "PUT",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  assert.strictEqual(response.status, 200, `${path}: ${await response.clone().text()}`)
}

const jobsOf = async (chatId: string) =>
  ((await (await fetch(`${server.url}/api/jobs?chatId=${chatId}`)).json()) as { jobs: Array<{ id: string; kind: string; status: string; result?: unknown }> }).jobs

describe("the chat's sub-agents", () => {
  it("research: live activity on the dispatch card, a reload while it runs, then the result card once and the wake answer", async () => {
    page = await newPage(browser)
    const chatId = await startChat("Please research what is new in sigma.js v3")
    await page.goto(`${server.url}/chats/${chatId}`)

    const card = page.locator(".dispatch-card")
    await card.filter({ hasText: /web_search|fetch_url|researching/ }).waitFor({ timeout: 15_000 })
    // The line moves on while the page watches: the sub-agent's next step shows without a reload.
    await card.filter({ hasText: "fetch_url" }).waitFor({ timeout: 15_000 })
    assert.strictEqual(await card.getAttribute("data-job-status"), "running")
    const panel = page.getByRole("region", { name: "Sub-agents" })
    await panel.locator(".job-status--running").waitFor()
    assert.match(await panel.locator(".subagents-item").textContent() ?? "", /Researchrunning(just now|\d+ s)/)
    await expectNoSeriousAxeViolations(page)
    await screenshot(page, "jobs-research-running")

    // Reloaded while the job runs: the chat comes back from the server and the job is followed again.
    assert.strictEqual((await jobsOf(chatId))[0]?.status, "running")
    await page.reload()
    await page.locator(".dispatch-card").waitFor()

    const steer = page.locator(".steer-card")
    await steer.waitFor({ timeout: 30_000 })
    await page.getByText("The researcher is back: sigma.js v3 draws with WebGL.").waitFor({ timeout: 15_000 })
    await steer.getByText("Renders with").waitFor()
    assert.strictEqual(await steer.locator("strong").first().textContent(), "Sigma.js v3")
    const source = steer.getByRole("link", { name: "Sigma.js v3: what changed" })
    assert.strictEqual(await source.getAttribute("href"), `${web}/pages/sigma-v3`)
    assert.strictEqual(await source.getAttribute("rel"), "noopener noreferrer")
    assert.strictEqual(await source.getAttribute("target"), "_blank")
    // Never raw HTML: the brief is text and React elements.
    assert.strictEqual(await steer.locator("script, iframe, img").count(), 0)

    const sources = ((await jobsOf(chatId))[0]?.result as { sources: Array<unknown> } | undefined)?.sources.length ?? 0
    assert.isAbove(sources, 0)
    assert.strictEqual(await steer.locator(".steer-card__sources li").count(), sources)
    const quiet = `research done · ${sources} source${sources === 1 ? "" : "s"}`
    await page.locator(".dispatch-card[data-job-status=done]").filter({ hasText: quiet }).waitFor()
    await panel.locator(".job-status--done").waitFor()
    assert.include(await panel.locator(".subagents-item").textContent(), quiet)
    // Further polls bring nothing twice.
    await page.waitForTimeout(1_500)
    assert.strictEqual(await page.locator(".steer-card").count(), 1)
    assert.strictEqual(await page.getByText("The researcher is back: sigma.js v3 draws with WebGL.").count(), 1)
    // By keyboard: the panel's entry brings its dispatch card into view and focus.
    await panel.getByRole("button", { name: /^Show the card of this job/ }).focus()
    await page.keyboard.press("Enter")
    assert.isTrue(await page.locator(".dispatch-card").evaluate((card) => card === document.activeElement))
    await expectNoSeriousAxeViolations(page)
    await screenshot(page, "jobs-research-done")
    await page.emulateMedia({ colorScheme: "dark" })
    await expectNoSeriousAxeViolations(page)
    await screenshot(page, "jobs-research-done-dark")
    await page.context().close()
  }, 90_000)

  it("a demo runs in the sandbox cut off from the console, and a figure is an image with a download", async () => {
    page = await newPage(browser)
    const chatId = await startChat("Please build a demo and a figure")
    await page.goto(`${server.url}/chats/${chatId}`)
    // The console's own storage and cookie, which the demo must not read.
    await page.evaluate(() => {
      localStorage.setItem("probe-secret", "console-only")
      document.cookie = "probe=console-only; path=/"
    })
    const before = page.url()

    const frameElement = page.locator("iframe.demo-frame")
    await frameElement.waitFor({ timeout: 60_000 })
    assert.strictEqual(await frameElement.getAttribute("sandbox"), "allow-scripts")
    assert.strictEqual(await frameElement.getAttribute("src"), "/sandbox.html")
    assert.strictEqual(await frameElement.getAttribute("title"), "Interactive demo: Sandbox probe")

    const demo = page.frameLocator("iframe.demo-frame")
    await demo.locator("body[data-done=yes]").waitFor({ timeout: 15_000 })
    for (const probe of ["parent-document", "local-storage", "cookie"]) {
      assert.strictEqual(await demo.locator(`#probe-${probe}`).getAttribute("data-outcome"), "blocked", probe)
    }
    // Refused, and nothing happened: the console is still where it was.
    assert.strictEqual(await demo.locator("#probe-top-navigation").getAttribute("data-outcome"), "blocked")
    await page.waitForTimeout(1_000)
    assert.strictEqual(page.url(), before, "the demo navigated the console")
    assert.notInclude(await demo.locator("#out").textContent() ?? "", "console-only")

    const figure = page.locator(".steer-card--visual img")
    await figure.waitFor({ timeout: 60_000 })
    assert.match((await figure.getAttribute("src")) ?? "", /^blob:/)
    assert.strictEqual(await figure.getAttribute("alt"), "A blue bar labelled Queue.")
    assert.isTrue(await figure.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0))
    assert.isTrue(await figure.isVisible())
    const download = page.getByRole("link", { name: "Download SVG" })
    const jobs = await jobsOf(chatId)
    const visualJob = jobs.find((job) => job.kind === "visual")
    assert.strictEqual(await download.getAttribute("download"), `figure-${visualJob?.id}.svg`)
    assert.strictEqual(await download.getAttribute("href"), await figure.getAttribute("src"))

    await page.getByText("The figure is in: the bar is the queue.").waitFor({ timeout: 15_000 })
    await page.getByText("The demo is in: try it above.").waitFor({ timeout: 15_000 })
    assert.strictEqual(await page.locator(".steer-card").count(), 2)
    await page.locator(".dispatch-card[data-job-status=done]").filter({ hasText: "demo done · “Sandbox probe”" }).waitFor()
    await page.locator(".dispatch-card[data-job-status=done]").filter({ hasText: "figure done · SVG" }).waitFor()
    await expectNoSeriousAxeViolations(page)
    await screenshot(page, "jobs-demo-figure")
    // A card whose ask is longer than a phone is wide shortens it: nothing in the conversation scrolls sideways.
    await page.setViewportSize({ width: 375, height: 800 })
    assert.strictEqual(await page.locator(".chat-log").evaluate((log) => log.scrollWidth - log.clientWidth), 0)
    // The frame is another process, which Chromium does not paint while it is out of the viewport (as on
    // the phone's full-page shot): the card itself, scrolled to, at the phone's width.
    await page.setViewportSize({ width: 375, height: 800 })
    await frameElement.scrollIntoViewIfNeeded()
    await page.waitForTimeout(300)
    await page.locator(".steer-card--demo").screenshot({ path: join(SCREENSHOTS_DIR, "jobs-demo-card-375.png") })
    await page.setViewportSize({ width: 1440, height: 900 })
    await page.emulateMedia({ colorScheme: "dark" })
    await expectNoSeriousAxeViolations(page)
    await screenshot(page, "jobs-demo-figure-dark")
    await page.context().close()
  }, 120_000)

  it("kinds of the operator's own: dispatch cards, the generic result card of what the sub-agent submitted, a failure as its card", async () => {
    await adminPut("/admin/subagents/digest", DIGEST_KIND)
    await adminPut("/admin/subagents/flaky", FLAKY_KIND)
    await adminPut("/admin/agents/digester", { systemPrompt: "You hand topics to your digester.", jobKinds: ["digest", "flaky"] })
    page = await newPage(browser)
    const chatId = await startChat("Please digest WebGL for me", "digester")
    await page.goto(`${server.url}/chats/${chatId}`)

    // Both calls are dispatch cards, named by their kind and what they were given.
    const digestCard = page.locator(".dispatch-card").filter({ hasText: "WebGL graph rendering" })
    const flakyCard = page.locator(".dispatch-card").filter({ hasText: "nothing in particular" })
    await digestCard.waitFor({ timeout: 15_000 })
    await flakyCard.waitFor()
    assert.strictEqual(await digestCard.locator(".job-kind--defined").textContent(), "digest")
    assert.strictEqual(await page.locator(".tool-card").count(), 0)

    // The result card: the tree of what the sub-agent submitted, its text as markdown.
    const result = page.locator(".steer-card--defined[data-kind=digest]")
    await result.waitFor({ timeout: 30_000 })
    assert.strictEqual(await result.getByRole("heading", { level: 3 }).textContent(), "digest result")
    // Keys bold (in the order the stored transcript gives them back), a list's objects nested under their key.
    assert.sameMembers(
      await result.locator(".result-tree__key").allTextContents(),
      ["headline:", "summary:", "points:", "sources:", "title:", "url:", "confidence:"]
    )
    assert.sameMembers(await result.locator(".result-tree__fields .result-tree__fields .result-tree__key").allTextContents(), ["title:", "url:"])
    await result.getByText("Sigma.js v3 draws graphs with WebGL").waitFor()
    assert.strictEqual(await result.locator(".brief-text__heading").textContent(), "In short")
    assert.strictEqual(await result.locator(".brief-text strong").filter({ hasText: "every node type" }).count(), 1)
    assert.strictEqual(await result.locator(".result-tree__items > li").first().textContent(), "One program per node type")
    const link = result.getByRole("link", { name: "https://example.com/sigma-v3" })
    assert.strictEqual(await link.getAttribute("rel"), "noopener noreferrer")
    assert.strictEqual(await result.locator(".result-tree__scalar").textContent(), "0.8")
    assert.strictEqual(await result.locator("script, iframe, img").count(), 0)

    // The other kind's `{ error }`: its failure card, and its dispatch card says why.
    const failed = page.locator(".steer-card--failed[data-kind=flaky]")
    await failed.waitFor({ timeout: 30_000 })
    assert.strictEqual(await failed.getByRole("heading", { level: 3 }).textContent(), "flaky failed")
    await failed.getByText("the sub-agent answered without calling submit_result").waitFor()
    await page.locator(".dispatch-card[data-job-status=failed]").filter({ hasText: "flaky failed · the sub-agent answered without calling submit_result" }).waitFor()
    await page.locator(".dispatch-card[data-job-status=done]").filter({ hasText: "digest done · “Sigma.js v3 draws graphs with WebGL”" }).waitFor()
    await page.getByText("The digest is in: the headline says it all.").waitFor({ timeout: 15_000 })
    const panel = page.getByRole("region", { name: "Sub-agents" })
    await panel.locator(".subagents-item").filter({ hasText: "digest done" }).waitFor()
    await panel.locator(".subagents-item").filter({ hasText: "flaky failed" }).waitFor()
    assert.strictEqual(await page.locator(".steer-card").count(), 2)

    await expectNoSeriousAxeViolations(page)
    // A long activity line (the failure's reason) is cut short in the sidebar: the page is never wider than the window.
    assert.strictEqual(await page.evaluate(() => document.documentElement.scrollWidth), 1440)
    await screenshot(page, "jobs-defined-kinds")
    // The conversation from its start: the dispatch cards, the failure card.
    await page.locator(".chat-log").evaluate((log) => log.scrollTo(0, 0))
    await screenshot(page, "jobs-defined-kinds-start")
    await page.setViewportSize({ width: 375, height: 800 })
    assert.strictEqual(await page.locator(".chat-log").evaluate((log) => log.scrollWidth - log.clientWidth), 0)
    assert.strictEqual(await page.evaluate(() => document.documentElement.scrollWidth), 375)
    await result.screenshot({ path: join(SCREENSHOTS_DIR, "jobs-defined-result-card-375.png") })
    await page.setViewportSize({ width: 1440, height: 900 })
    await page.emulateMedia({ colorScheme: "dark" })
    await expectNoSeriousAxeViolations(page)
    await screenshot(page, "jobs-defined-kinds-dark")
    await page.context().close()
  }, 90_000)
})
