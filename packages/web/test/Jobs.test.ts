/**
 * The chat's sub-agents in Chromium against the built server (ConsoleHarness): the scripted
 * provider plays both the chat and the sub-agents (the script: support/JobsScript.ts), the research
 * sub-agent searches and reads the README's local search server (examples/search-server.ts:
 * support/SearchServer.ts), the demo builder's page is tested by the server's own headless
 * Chromium, the figure is rendered by resvg. Each chat's first turn goes through the API; the
 * browser opens `/chats/{chatId}`, where the chat page renders the jobs views
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
 * The watch asks nothing while the tab is hidden and no job runs, and at once when it is shown again.
 *
 * axe-core on each state, screenshots at 375 and 1440 px in light and dark.
 */
import { newChatId, newMessageId } from "@switchboard/client"
import type { ChildProcess } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
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
import { DIGEST_KIND, FLAKY_KIND, script } from "./support/JobsScript.ts"
import { startSearchServer } from "./support/SearchServer.ts"

const ADMIN_TOKEN = "jobs-test-admin-token"

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

    // Nothing runs now: in a hidden tab the page asks nothing (every 2 s otherwise); shown again, at once.
    const listings: Array<string> = []
    page.on("request", (request) => {
      if (request.url().includes(`/api/jobs?chatId=${chatId}`)) listings.push(request.url())
    })
    const show = (state: "hidden" | "visible") =>
      page.evaluate((visibility) => {
        Object.defineProperty(document, "visibilityState", { configurable: true, get: () => visibility })
        document.dispatchEvent(new Event("visibilitychange"))
      }, state)
    await page.waitForRequest((request) => request.url().includes(`/api/jobs?chatId=${chatId}`))
    await show("hidden")
    await page.waitForTimeout(500) // a poll already on its way when the tab was hidden
    const before = listings.length
    await page.waitForTimeout(5_000) // two and a half idle periods
    assert.strictEqual(listings.length, before, "a hidden idle tab polls nothing")
    const shown = page.waitForRequest((request) => request.url().includes(`/api/jobs?chatId=${chatId}`))
    await show("visible")
    await shown
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
