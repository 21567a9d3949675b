/**
 * An approval in the console, in Chromium against the built server (scripted provider,
 * test/fixtures/approval-script.json) and a fake MCP server here: the model asks to run
 * `shop__refund`, the card waits with Approve / Deny, a reload keeps it (it comes from the
 * transcript), Approve runs the tool once and the result card and the answer appear once. A
 * server tool without approval (`shop__lookup`) shows its card running, then done.
 * Screenshots at both widths.
 */
import type { Browser, Page } from "playwright-core"
import { Effect, Exit, Scope } from "effect"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { startFakeMcp, textTool } from "@switchboard/server/testing"
import type { FakeMcp } from "@switchboard/server/testing"
import { expectNoSeriousAxeViolations, launchBrowser, newPage, screenshot, startConsoleServer } from "./support/ConsoleHarness.ts"
import type { ConsoleServer } from "./support/ConsoleHarness.ts"

const SCRIPT = join(import.meta.dirname, "fixtures", "approval-script.json")
const ADMIN_TOKEN = "admin-token-for-console-approvals"

let server: ConsoleServer
let browser: Browser
let page: Page
let mcp: FakeMcp
const scope = Effect.runSync(Scope.make())

beforeAll(async () => {
  mcp = await Effect.runPromise(startFakeMcp([
    textTool("refund", (args) => `refunded order ${String(args["order"])}`),
    // Slow enough to be seen running.
    {
      name: "lookup",
      run: async (args) => {
        await new Promise((done) => setTimeout(done, 1500))
        return { content: [{ type: "text", text: `order ${String(args["order"])} is paid` }] }
      }
    }
  ]).pipe(Scope.provide(scope)))
  ;[server, browser] = await Promise.all([
    startConsoleServer({ LLM_SCRIPT: SCRIPT, ADMIN_TOKEN }),
    launchBrowser()
  ])
  const put = await fetch(`${server.url}/admin/agents/shop`, {
    method: "PUT",
    headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` },
    body: JSON.stringify({ systemPrompt: "A shop's support agent", mcpServers: [{ name: "shop", url: mcp.url, requireApproval: ["refund"] }] })
  })
  assert.strictEqual(put.status, 200, await put.text())
  page = await newPage(browser)
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

const refunds = () => mcp.calls.filter((c) => c.name === "refund").length

describe("an approval in the console", () => {
  it("asks with Approve / Deny, survives a reload, runs the tool once on Approve", async () => {
    await page.goto(`${server.url}/`)
    await page.getByRole("button", { name: "New chat" }).click()
    await page.getByLabel("Agent", { exact: true }).fill("shop")
    await page.getByRole("button", { name: "Start chat" }).click()
    await page.getByText("Connected: agent shop.").waitFor()
    const composer = page.getByLabel("Message", { exact: true })
    await composer.fill("Please refund order 42")
    await composer.press("Enter")
    const waiting = page.getByRole("group", { name: "Tool shop__refund: Awaiting approval" })
    await waiting.getByRole("button", { name: "Approve shop__refund" }).waitFor()
    await page.locator('.chat-status[data-status="idle"]').waitFor()
    assert.strictEqual(refunds(), 0, "nothing runs before the decision")
    await expectNoSeriousAxeViolations(page)
    await screenshot(page, "chat-approval")

    // From the transcript: the card and its buttons come back after a reload.
    await page.reload()
    await waiting.getByRole("button", { name: "Approve shop__refund" }).waitFor()
    assert.strictEqual(await waiting.getByText('order: 42').count(), 1)

    await waiting.getByRole("button", { name: "Approve shop__refund" }).click()
    await page.getByText("Done: refunded order 42.").waitFor({ timeout: 20_000 })
    const done = page.getByRole("group", { name: "Tool shop__refund: Done" })
    await done.waitFor()
    assert.strictEqual(await done.count(), 1, "the result card appears once")
    assert.strictEqual(await page.getByRole("group", { name: /Tool shop__refund/ }).count(), 1)
    assert.strictEqual(await page.getByText("Done: refunded order 42.").count(), 1, "the answer appears once")
    assert.strictEqual(refunds(), 1)
    await page.locator('.chat-status[data-status="idle"]').waitFor()
    await expectNoSeriousAxeViolations(page)
    await screenshot(page, "chat-approved")

    // Denied with a reason: the model reads it, the tool never runs.
    await composer.fill("Another refund please")
    await composer.press("Enter")
    const second = page.getByRole("group", { name: "Tool shop__refund: Awaiting approval" })
    await second.getByRole("button", { name: "Deny shop__refund" }).waitFor()
    await second.getByLabel("Reason for denying").fill("already refunded")
    await second.getByRole("button", { name: "Deny shop__refund" }).click()
    await page.getByText("Not refunded: denied by the user: already refunded").waitFor({ timeout: 20_000 })
    assert.strictEqual(refunds(), 1)
    await screenshot(page, "chat-denied")

    // A server tool that needs no approval: its card runs while the server runs it, then is done.
    await composer.fill("Please look up order 7")
    await composer.press("Enter")
    await page.getByRole("group", { name: "Tool shop__lookup: Running…" }).waitFor()
    await screenshot(page, "chat-server-tool-running")
    await page.getByText("Found: order 7 is paid.").waitFor({ timeout: 20_000 })
    const looked = page.getByRole("group", { name: "Tool shop__lookup: Done" })
    await looked.waitFor()
    assert.strictEqual(await looked.count(), 1)
    await page.locator('.chat-status[data-status="idle"]').waitFor()
    await screenshot(page, "chat-server-tool-done")
  }, 120_000)
})
