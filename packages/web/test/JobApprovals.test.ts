/**
 * A sub-agent job parked on a call that needs the user's approval (docs/subagents.md, "Approvals
 * inside a job"), in the console: Chromium against the built server (scripted provider,
 * test/fixtures/job-approval-script.json) and a fake MCP server here. A kind of the test's own,
 * `refund-run`, whose sub-agent calls the shop's `refund` (under `requireApproval`), and an agent
 * naming it; the message is sent from the composer.
 *
 * - the dispatch card shows the call's approval card (the turn's own: tool, input, Approve, a
 *   reason, Deny) and the sub-agents panel says the job waits; nothing runs before the decision;
 * - Approve: the card goes, the job runs again, the tool ran once, the result card comes;
 * - Deny with a reason: the result says the denial, the tool never ran;
 * - decided elsewhere first (the API, as another tab or the CLI would): the card's Approve meets
 *   the 409 and says so, and the card goes once the job's record waits no more.
 *
 * axe-core on the waiting state, screenshots at 375 and 1440 px.
 */
import type { Browser, Page, Route } from "playwright-core"
import { Effect, Exit, Scope } from "effect"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { startFakeMcp, textTool } from "@switchboard/server/testing"
import type { FakeMcp } from "@switchboard/server/testing"
import { expectNoSeriousAxeViolations, launchBrowser, newPage, screenshot, startConsoleServer } from "./support/ConsoleHarness.ts"
import type { ConsoleServer } from "./support/ConsoleHarness.ts"

const SCRIPT = join(import.meta.dirname, "fixtures", "job-approval-script.json")
const ADMIN_TOKEN = "admin-token-for-console-job-approvals"

let server: ConsoleServer
let browser: Browser
let page: Page
let mcp: FakeMcp
const scope = Effect.runSync(Scope.make())

/** An operator's write (`PUT /admin/…`), with the admin token. */
const adminPut = async (path: string, body: unknown) => {
  const response = await fetch(`${server.url}${path}`, {
    method: "PUT",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  assert.strictEqual(response.status, 200, `${path}: ${await response.clone().text()}`)
}

beforeAll(async () => {
  mcp = await Effect.runPromise(startFakeMcp([textTool("refund", (args) => `refunded order ${String(args["order"])}`)]).pipe(Scope.provide(scope)))
  ;[server, browser] = await Promise.all([startConsoleServer({ LLM_SCRIPT: SCRIPT, ADMIN_TOKEN }), launchBrowser()])
  await adminPut("/admin/subagents/refund-run", {
    description: "Refund an order in the background, once the user allows it.",
    input: [{ key: "order", type: "integer", required: true }],
    systemPrompt: "You refund orders. Order {{input.order}}.",
    mcpServers: [{ name: "shop", url: mcp.url, requireApproval: ["refund"] }],
    result: { type: "object", properties: { outcome: { type: "string" } }, required: ["outcome"] },
    maxSteps: 3
  })
  await adminPut("/admin/agents/shop", { systemPrompt: "Shop back office.", jobKinds: ["refund-run"] })
  page = await newPage(browser)
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

const refunds = () => mcp.calls.filter((c) => c.name === "refund").length

/** The approval a chat's parked job waits on, as the jobs list gives it. */
const waitingApproval = async (chatId: string): Promise<string> => {
  const { jobs } = (await (await fetch(`${server.url}/api/jobs?chatId=${chatId}&results=omit`)).json()) as {
    jobs: Array<{ status: string; waitingFor?: { approvalId: string } }>
  }
  const approvalId = jobs.find((job) => job.status === "running" && job.waitingFor !== undefined)?.waitingFor?.approvalId
  assert.isDefined(approvalId, JSON.stringify(jobs))
  return approvalId!
}

describe("a parked job's approval in the console", () => {
  it("asks in the dispatch card; Approve runs the tool once, Deny with a reason is the result, a decision elsewhere is said", async () => {
    await page.goto(`${server.url}/`)
    await page.getByRole("button", { name: "New chat" }).click()
    await page.getByLabel("Agent", { exact: true }).fill("shop")
    await page.getByRole("button", { name: "Start chat" }).click()
    await page.getByText("Connected: agent shop.").waitFor()
    const composer = page.getByLabel("Message", { exact: true })
    const panel = page.getByRole("region", { name: "Sub-agents" })
    const cards = page.locator(".dispatch-card")
    const results = page.locator(".steer-card--defined[data-kind=refund-run]")

    // Parked: the approval card inside the dispatch card, the panel says what the job waits for.
    await composer.fill("Please refund order 5")
    await composer.press("Enter")
    const first = cards.nth(0)
    const asked = first.getByRole("group", { name: "Tool shop__refund: Awaiting approval" })
    await asked.getByRole("button", { name: "Approve shop__refund" }).waitFor({ timeout: 20_000 })
    assert.strictEqual(await first.getAttribute("data-job-status"), "waiting")
    assert.strictEqual(await first.locator(".dispatch-card__text").textContent(), "waiting for approval: shop__refund")
    assert.strictEqual(await asked.getByText("order: 5").count(), 1)
    await asked.getByText("The sub-agent asks to run").waitFor()
    const entry = panel.locator(".subagents-item--waiting")
    await entry.filter({ hasText: "waiting for approval: shop__refund" }).waitFor()
    assert.strictEqual(await entry.locator(".job-status").textContent(), "waiting")
    await page.locator('.chat-status[data-status="idle"]').waitFor()
    assert.strictEqual(refunds(), 0, "nothing runs before the decision")
    await expectNoSeriousAxeViolations(page)
    await screenshot(page, "job-approval-waiting")
    await page.emulateMedia({ colorScheme: "dark" })
    await expectNoSeriousAxeViolations(page)
    await screenshot(page, "job-approval-waiting-dark")
    await page.emulateMedia({ colorScheme: "light" })

    // Approve: the approval goes, the job runs again (its sub-agent's next step takes 2 s), then its result.
    await asked.getByRole("button", { name: "Approve shop__refund" }).click()
    await page.locator(".dispatch-card[data-job-status=running]").waitFor({ timeout: 10_000 })
    assert.strictEqual(await first.getByRole("group").count(), 0, "the approval card goes once the job waits no more")
    await results.filter({ hasText: "refunded order 5" }).waitFor({ timeout: 30_000 })
    await first.filter({ hasText: "refund-run done · “refunded order 5”" }).waitFor()
    await page.getByText("The refund job has reported.").waitFor({ timeout: 15_000 })
    assert.strictEqual(refunds(), 1, "the tool ran once")
    assert.strictEqual(await results.count(), 1)
    await panel.locator(".subagents-item--done").waitFor()
    await screenshot(page, "job-approval-approved")

    // Deny with a reason: the sub-agent reads the denial, which is its result; the tool never runs.
    await composer.fill("Please refund order 6")
    await composer.press("Enter")
    const second = cards.nth(1)
    const denied = second.getByRole("group", { name: "Tool shop__refund: Awaiting approval" })
    await denied.getByRole("button", { name: "Deny shop__refund" }).waitFor({ timeout: 20_000 })
    assert.strictEqual(await denied.getByText("order: 6").count(), 1)
    await denied.getByLabel("Reason for denying").fill("too large")
    await denied.getByRole("button", { name: "Deny shop__refund" }).click()
    await results.filter({ hasText: "denied by the user: too large" }).waitFor({ timeout: 30_000 })
    await page.getByText("The refund was not made: you denied it.").waitFor({ timeout: 15_000 })
    assert.strictEqual(refunds(), 1, "a denied call never runs")
    assert.strictEqual(await second.getByRole("group").count(), 0)
    await screenshot(page, "job-approval-denied")

    // Decided elsewhere first: the page's poll held back meanwhile (its request waits), so that the card still asks.
    await composer.fill("Please refund order 7")
    await composer.press("Enter")
    const third = cards.nth(2)
    const late = third.getByRole("group", { name: "Tool shop__refund: Awaiting approval" })
    await late.getByRole("button", { name: "Approve shop__refund" }).waitFor({ timeout: 20_000 })
    const chatId = decodeURIComponent(new URL(page.url()).pathname.split("/").at(-1)!)
    const held: Array<Route> = []
    const jobsList = (url: URL) => url.pathname === "/api/jobs"
    let holding = true
    await page.route(jobsList, (route) => holding ? void held.push(route) : route.continue())
    const decided = await fetch(`${server.url}/api/chats/${chatId}/approvals/${await waitingApproval(chatId)}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ approved: true })
    })
    assert.strictEqual(decided.status, 202, await decided.text())
    await late.getByRole("button", { name: "Approve shop__refund" }).click()
    await late.getByText("Decided already (in another tab, or by the CLI)", { exact: false }).waitFor()
    await screenshot(page, "job-approval-decided-elsewhere")
    holding = false
    await Promise.all(held.map((route) => route.continue()))
    await page.unroute(jobsList)
    await results.filter({ hasText: "refunded order 7" }).waitFor({ timeout: 30_000 })
    assert.strictEqual(await third.getByRole("group").count(), 0)
    assert.strictEqual(refunds(), 2, "decided once, run once")
  }, 150_000)
})
