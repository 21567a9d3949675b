/**
 * The operator's agents page in Chromium against the built server (support/OperatorHarness.ts):
 * the agents (the built-in one read-only; define, edit, delete), deleting a chat, and the sub-agent
 * kinds — one defined over the API, listed in full (never its MCP header's value), offered by the
 * agent form, its deletion refused while an agent names it. The hosts, tasks, profiles and usage
 * pages are Operator.test.ts's.
 *
 * The MCP header's value (and the provider key, though this file types none) is looked for at the
 * end in the HTML of every page visited and every response body the console received.
 */
import { randomBytes } from "node:crypto"
import { join } from "node:path"
import type { Browser, Page } from "playwright-core"
import { assert, beforeAll, describe, it } from "vitest"
import { expectNoSeriousAxeViolations, newPage, screenshot, SCREENSHOTS_DIR } from "./support/ConsoleHarness.ts"
import type { ConsoleServer } from "./support/ConsoleHarness.ts"
import { ADMIN_TOKEN, fitsAPhone, HEADER_SECRET, heading, useOperatorConsole } from "./support/OperatorHarness.ts"

/** A defined kind that stays: the agents page's screenshots show it beside the built-in ones. */
const TRANSLATOR = {
  description: "Translates a text into another language.",
  input: [{ key: "text", type: "string", required: true }, { key: "language", type: "string", required: true }],
  systemPrompt: "Translate into {{input.language}}: {{input.text}}",
  result: { type: "object", required: ["translation"], properties: { translation: { type: "string" } } }
}

const operator = useOperatorConsole()
const { signIn, visited, watch } = operator
let server: ConsoleServer
let browser: Browser
let page: Page
beforeAll(() => void ({ server, browser, page } = operator))

describe("the operator's console: agents and sub-agent kinds", () => {
  it("agents: the built-in read-only; create with the JSON checked, the server's refusals at their field; edit; delete; delete a chat", async () => {
    await page.goto(`${server.url}/operator/agents`)
    await signIn(page)
    await heading(page, "Agents").waitFor()
    await page.getByRole("link", { name: "media-editor" }).click()
    await heading(page, "Agent media-editor").waitFor()
    await page.getByText("cannot be replaced or deleted").waitFor()
    assert.strictEqual(await page.getByRole("button", { name: /Save|Delete/ }).count(), 0)
    await expectNoSeriousAxeViolations(page)
    await screenshot(page, "operator-agent-builtin")
    await page.getByRole("link", { name: "← All agents" }).click()

    const form = page.getByRole("region", { name: "Define an agent" })
    const create = form.getByRole("button", { name: "Create agent" })
    await form.getByLabel("Name", { exact: true }).fill("support")
    await form.getByLabel("System prompt").fill("You help customer {{context.customerId}}.")
    // Not JSON: said at the field, nothing sent.
    await form.getByLabel("Client tools (JSON)").fill("[{")
    await create.click()
    await form.getByRole("alert").filter({ hasText: "Not JSON" }).waitFor()
    assert.strictEqual(await form.getByLabel("Client tools (JSON)").getAttribute("aria-invalid"), "true")
    // A tool without its description: the request's schema refuses it, at the field.
    await form.getByLabel("Client tools (JSON)").fill('[{ "name": "lookup_order" }]')
    await create.click()
    await form.getByRole("alert").filter({ hasText: "description" }).waitFor()
    assert.strictEqual(await form.getByLabel("Client tools (JSON)").getAttribute("aria-invalid"), "true")
    // A context schema the server's validator does not compile: its 400, at the field.
    await form.getByLabel("Client tools (JSON)").fill(
      '[{ "name": "lookup_order", "description": "Find an order", "parameters": [{ "key": "orderId", "type": "string", "required": true }] }]'
    )
    await form.getByLabel("Context schema (JSON Schema)").fill('{ "type": "nonsense" }')
    await create.click()
    await form.getByRole("alert").filter({ hasText: "contextSchema is not a JSON Schema" }).waitFor()
    assert.strictEqual(await form.getByLabel("Context schema (JSON Schema)").getAttribute("aria-invalid"), "true")
    assert.isNull(await form.getByLabel("Client tools (JSON)").getAttribute("aria-invalid"))
    await form.getByLabel("Context schema (JSON Schema)").fill('{ "type": "object", "properties": { "customerId": { "type": "string" } } }')
    await form.getByLabel("research").check()
    await create.click()
    await heading(page, "Agent support").waitFor()
    const agentPath = new URL(page.url()).pathname

    // Edit: saved whole, shown as saved after a reload.
    await page.getByLabel("Description").fill("The shop's support assistant")
    await page.getByRole("button", { name: "Save agent" }).click()
    await page.getByText("Saved: the next turn of its chats uses it.").waitFor()
    await page.reload()
    await heading(page, "Agent support").waitFor()
    assert.strictEqual(await page.getByLabel("Description").inputValue(), "The shop's support assistant")
    assert.isTrue(await page.getByLabel("research").isChecked())
    assert.include(await page.getByLabel("Client tools (JSON)").inputValue(), "lookup_order")

    // The same name again: agent_exists, at the name.
    await page.goto(`${server.url}/operator/agents`)
    await page.getByRole("row", { name: /support/ }).getByText("lookup_order").waitFor()
    await form.getByLabel("Name", { exact: true }).fill("support")
    await form.getByLabel("System prompt").fill("Another")
    await create.click()
    await form.getByRole("alert").filter({ hasText: /agent_exists|already/ }).waitFor()
    assert.strictEqual(await form.getByLabel("Name", { exact: true }).getAttribute("aria-invalid"), "true")

    // Delete, after the confirmation.
    await page.goto(`${server.url}${agentPath}`)
    await page.getByRole("button", { name: "Delete agent…" }).click()
    await page.getByRole("dialog").getByRole("button", { name: "Delete agent" }).click()
    await heading(page, "Agents").waitFor()
    await page.getByRole("row", { name: /media-editor/ }).waitFor()
    assert.strictEqual(await page.getByRole("row", { name: /support/ }).count(), 0)

    // A chat, deleted by id.
    const chatId = `chat-${randomBytes(4).toString("hex")}`
    const turn = await fetch(`${server.url}/api/agent/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ chatId, messages: [{ id: "m1", role: "user", content: "hello", timestamp: Date.now() }] })
    })
    assert.strictEqual(turn.status, 200, await turn.text())
    const transcript = async () => (await fetch(`${server.url}/api/chats/${chatId}/messages`)).json() as Promise<{ messages?: unknown[] }>
    assert.isAbove((await transcript()).messages?.length ?? 0, 0)
    await page.getByLabel("Chat id").fill(chatId)
    await page.getByRole("button", { name: "Delete chat…" }).click()
    await page.getByRole("dialog", { name: `Delete chat ${chatId}?` }).getByRole("button", { name: "Delete chat" }).click()
    await page.getByText(`Chat ${chatId} deleted.`).waitFor()
    assert.strictEqual((await transcript()).messages?.length ?? 0, 0)
    // Again: the server's 404, said in the dialog.
    await page.getByLabel("Chat id").fill(chatId)
    await page.getByRole("button", { name: "Delete chat…" }).click()
    const again = page.getByRole("dialog", { name: `Delete chat ${chatId}?` })
    await again.getByRole("button", { name: "Delete chat" }).click()
    await again.getByRole("alert").filter({ hasText: "chat_not_found" }).waitFor()
    await page.keyboard.press("Escape")
    await again.waitFor({ state: "hidden" })
  }, 120_000)

  it("sub-agent kinds: the built-in ones read-only, a defined one in full and offered to the agent form; deleted only once no agent names it", async () => {
    const admin = (method: string, path: string, body?: unknown) =>
      fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
    const summarizer = {
      description: "Summarises a web page into its key points, for a reader in a hurry.",
      input: [
        { key: "url", type: "string", required: true, description: "The page" },
        { key: "tone", type: "string", required: false, enum: ["plain", "formal"] }
      ],
      systemPrompt: "Summarise {{input.url}} in a {{input.tone}} tone.",
      tools: ["fetch_url"],
      mcpServers: [{ name: "docs", url: "http://127.0.0.1:9/mcp", headers: { authorization: `Bearer ${HEADER_SECRET}` } }],
      result: { type: "object", required: ["points"], properties: { points: { type: "array", items: { type: "string" } } } },
      model: "small-model",
      maxSteps: 4,
      timeoutMs: 120_000
    }
    for (const [kind, body] of [["summarizer", summarizer], ["translator", TRANSLATOR]] as const) {
      const put = await admin("PUT", `/admin/subagents/${kind}`, body)
      assert.strictEqual(put.status, 200, await put.text())
    }

    await page.goto(`${server.url}/operator/agents`)
    const kinds = page.getByRole("region", { name: "Sub-agent kinds" })
    const card = (kind: string) => kinds.getByRole("article", { name: kind })
    await card("summarizer").waitFor()
    // The built-in ones first, read-only; then the defined ones by name.
    assert.deepStrictEqual(
      await kinds.locator(".kind-card h3").allTextContents(),
      ["research", "demo", "visual", "summarizer", "translator"]
    )
    for (const kind of ["research", "demo", "visual"]) {
      await card(kind).getByText("built-in").waitFor()
      assert.strictEqual(await card(kind).getByRole("button").count(), 0)
    }
    const summary = card("summarizer")
    await summary.getByText("Summarises a web page into its key points").waitFor()
    assert.include(await summary.locator(".kind-params").textContent(), "url string, required — The page")
    assert.include(await summary.locator(".kind-params").textContent(), "tone string (plain | formal), optional")
    assert.include(await summary.locator(".facts").textContent(), "Toolsfetch_url")
    assert.include(await summary.locator(".facts").textContent(), "MCP serversdocs")
    assert.include(await summary.locator(".facts").textContent(), "Limits4 steps · 2 min")
    assert.include(await summary.locator(".facts").textContent(), "Modelsmall-model")
    // The result schema folded until asked for.
    const schema = summary.locator("details").filter({ hasText: "Result schema" })
    assert.isFalse(await schema.locator("pre").isVisible())
    await schema.locator("summary").click()
    assert.include(await schema.locator("pre").textContent(), '"points"')
    // An MCP header's value is write-only: its name at most, never its value.
    assert.notInclude(await page.content(), HEADER_SECRET)
    await expectNoSeriousAxeViolations(page)

    // The agent form offers every kind; an agent that names one is created through it.
    const form = page.getByRole("region", { name: "Define an agent" })
    await form.getByLabel("Name", { exact: true }).fill("reader")
    await form.getByLabel("System prompt").fill("You read pages for the user.")
    await form.getByLabel(/summarizer — Summarises a web page/).check()
    await form.getByRole("button", { name: "Create agent" }).click()
    await heading(page, "Agent reader").waitFor()
    assert.isTrue(await page.getByLabel(/summarizer — /).isChecked())
    assert.isFalse(await page.getByLabel(/translator — /).isChecked())
    assert.isFalse(await page.getByLabel(/research — /).isChecked())

    // Deleting it while the agent names it: the server's 409, said in the dialog.
    await page.goto(`${server.url}/operator/agents`)
    await card("summarizer").getByRole("button", { name: "Delete kind…" }).click()
    const dialog = page.getByRole("dialog", { name: "Delete the kind summarizer?" })
    await dialog.getByRole("button", { name: "Delete kind" }).click()
    await dialog.getByRole("alert").filter({ hasText: "subagent_in_use" }).waitFor()
    assert.include(await dialog.getByRole("alert").textContent(), "reader")
    await expectNoSeriousAxeViolations(page)
    await screenshot(page, "operator-subagent-in-use")
    await page.keyboard.press("Escape")
    await dialog.waitFor({ state: "hidden" })
    await card("summarizer").waitFor()
    await screenshot(page, "operator-subagent-kinds")
    // The defined kind's card itself, at both widths (the page's own shots are long).
    await fitsAPhone(page)
    for (const width of [375, 1440]) {
      await page.setViewportSize({ width, height: 900 })
      await card("summarizer").screenshot({ path: join(SCREENSHOTS_DIR, `operator-subagent-card-${width}.png`) })
    }

    // Once no agent names it, it goes.
    assert.strictEqual((await admin("DELETE", "/admin/agents/reader")).status, 204)
    await card("summarizer").getByRole("button", { name: "Delete kind…" }).click()
    await dialog.getByRole("button", { name: "Delete kind" }).click()
    await kinds.getByText("Kind summarizer deleted.").waitFor()
    await card("summarizer").waitFor({ state: "detached" })
    assert.deepStrictEqual(await kinds.locator(".kind-card h3").allTextContents(), ["research", "demo", "visual", "translator"])
    assert.isFalse(await page.getByRole("region", { name: "Define an agent" }).getByLabel(/summarizer/).isVisible())
  }, 120_000)

  it("the agents pages: axe clean, screenshotted at 375 and 1440 px, light and dark", async () => {
    const dark = await newPage(browser, { colorScheme: "dark" })
    watch(dark)
    try {
      await dark.goto(`${server.url}/operator/agents`)
      await signIn(dark)
      const shots: Array<readonly [string, string, (p: Page) => Promise<void>]> = [
        ["agents", "/operator/agents", async (p) => {
          await p.getByRole("row", { name: /media-editor/ }).waitFor()
          await p.getByRole("article", { name: "translator" }).waitFor()
        }],
        ["agent-new", "/operator/agents", (p) => p.getByRole("button", { name: "Create agent" }).waitFor()]
      ]
      for (const [scheme, p] of [["light", page], ["dark", dark]] as const) {
        for (const [name, path, ready] of shots) {
          await p.goto(`${server.url}${path}`)
          await ready(p)
          await expectNoSeriousAxeViolations(p)
          await fitsAPhone(p)
          await visited(p)
          if (name === "agent-new") continue
          await screenshot(p, `operator-${name}-${scheme}`)
        }
      }
      // An agent's editing page (one defined for it).
      await fetch(`${server.url}/admin/agents`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "tutor", description: "A patient tutor", systemPrompt: "You teach {{context.topic}}.", jobKinds: ["research", "visual"] })
      })
      for (const [scheme, p] of [["light", page], ["dark", dark]] as const) {
        await p.goto(`${server.url}/operator/agents/tutor`)
        await p.getByRole("button", { name: "Save agent" }).waitFor()
        await expectNoSeriousAxeViolations(p)
        await fitsAPhone(p)
        await screenshot(p, `operator-agent-${scheme}`)
      }
      await operator.expectNoSecretShown()
    } finally {
      await dark.context().close()
    }
  }, 120_000)
})
