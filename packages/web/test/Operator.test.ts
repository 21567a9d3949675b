/**
 * The operator's pages in Chromium against the built server (support/ConsoleHarness.ts), with
 * ADMIN_TOKEN and CREDENTIAL_KEY, and a stand-in OpenAI-compatible provider on a local port for the
 * planner (the profile created in the console points at it).
 *
 * A host agent is simulated by the test itself over HTTP, with plain `fetch` and the host token the
 * console showed once: heartbeat, claim, one planner decision at a time, result — while the task's
 * page, open in the browser, shows each decision as it is taken, without a reload.
 *
 * The provider key typed into the profile form is looked for everywhere it must not be: the HTML of
 * every operator page visited, every response body the console received, the server's output.
 */
import { randomBytes } from "node:crypto"
import { createServer } from "node:http"
import type { Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import type { Browser, Page, Response } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { expectNoSeriousAxeViolations, launchBrowser, newPage, screenshot, SCREENSHOTS_DIR, startConsoleServer } from "./support/ConsoleHarness.ts"
import type { ConsoleServer } from "./support/ConsoleHarness.ts"

const ADMIN_TOKEN = `admin-${randomBytes(8).toString("hex")}`
/** The provider key typed into the profile form: nowhere to be seen again. */
const SECRET_KEY = `sk-operator-secret-${randomBytes(12).toString("hex")}`
const GOAL = "tidy the build box"
/** An MCP server's header value given with a sub-agent kind: write-only, never on a page. */
const HEADER_SECRET = `mcp-header-${randomBytes(8).toString("hex")}`
/** A defined kind that stays: the agents page's screenshots show it beside the built-in ones. */
const TRANSLATOR = {
  description: "Translates a text into another language.",
  input: [{ key: "text", type: "string", required: true }, { key: "language", type: "string", required: true }],
  systemPrompt: "Translate into {{input.language}}: {{input.text}}",
  result: { type: "object", required: ["translation"], properties: { translation: { type: "string" } } }
}

/** The stand-in provider: one tool call per request, the first tool offered, `{ step: n }`; the keys it was given. */
const provider = { server: undefined as Server | undefined, url: "", keys: [] as Array<string>, calls: 0 }

const startProvider = () =>
  new Promise<void>((ready) => {
    const server = createServer((req, res) => {
      let text = ""
      req.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")))
      req.on("end", () => {
        provider.keys.push(req.headers.authorization ?? "")
        const body = JSON.parse(text) as { tools?: Array<{ function?: { name?: string } }> }
        const name = body.tools?.[0]?.function?.name ?? "click"
        const step = provider.calls++
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
          id: `chatcmpl-${step}`,
          object: "chat.completion",
          created: Math.floor(Date.now() / 1000),
          model: "stand-in",
          choices: [{
            index: 0,
            finish_reason: "tool_calls",
            message: {
              role: "assistant",
              content: null,
              tool_calls: [{ id: `call_${step}`, type: "function", function: { name, arguments: JSON.stringify({ step, target: `button-${step}` }) } }]
            }
          }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }
        }))
      })
    })
    server.listen(0, "127.0.0.1", () => {
      provider.server = server
      provider.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
      ready()
    })
  })

let server: ConsoleServer
let browser: Browser
let page: Page
/** Every response body the console received (text), and the HTML of every operator page visited. */
const bodies: Array<Promise<string>> = []
const pages: Array<string> = []
/** Paths the console requested. */
const requested: Array<string> = []

const watch = (p: Page) => {
  p.on("response", (response: Response) => {
    bodies.push(response.body().then((b) => b.toString("utf8"), () => ""))
  })
  p.on("request", (request) => void requested.push(new URL(request.url()).pathname))
}

beforeAll(async () => {
  ;[server, browser] = await Promise.all([
    startConsoleServer({ ADMIN_TOKEN, CREDENTIAL_KEY: randomBytes(32).toString("base64") }),
    launchBrowser(),
    startProvider()
  ])
  page = await newPage(browser)
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url })
  watch(page)
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
  provider.server?.close()
})

const heading = (p: Page, name: string | RegExp) => p.getByRole("heading", { level: 1, name })

/** Keeps the page's HTML (to look for the key in) once it shows what `ready` waits for. */
const visited = async (p: Page = page) => void pages.push(await p.content())

const signIn = async (p: Page) => {
  await heading(p, "Sign in as operator").waitFor()
  await p.getByLabel(/token/).fill(ADMIN_TOKEN)
  await p.getByRole("button", { name: "Sign in" }).click()
}

/** What a host agent sends, over HTTP with its token. */
const host = (hostId: string, token: string) => {
  const post = async (path: string, body?: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await response.text()
    assert.isTrue(response.ok, `${path}: ${response.status} ${text}`)
    return text === "" ? undefined : JSON.parse(text)
  }
  return {
    heartbeat: () => post(`/internal/hosts/${hostId}/heartbeat`),
    claim: () => post(`/internal/hosts/${hostId}/claim`) as Promise<{ task: { taskId: string; attempt: number; goal: string } }>,
    decide: (taskId: string, attempt: number, step: number) =>
      post("/internal/planner/decision", {
        hostId,
        taskId,
        attempt,
        systemPrompt: "You operate a build box. Call exactly one tool.",
        userPrompt: `Goal: ${GOAL}\nSteps taken so far: ${step}`,
        tools: [{
          name: "click",
          description: "Click a control",
          parameters: { type: "object", properties: { step: { type: "integer" }, target: { type: "string" } } }
        }]
      }) as Promise<{ toolName: string; arguments: Record<string, unknown>; stepIndex: number }>,
    result: (taskId: string, attempt: number) =>
      post(`/internal/tasks/${taskId}/result`, { hostId, attempt, status: "succeeded", output: "the box is tidy" })
  }
}

/** A host's id, by its name (`GET /admin/hosts`). */
const hostIdOf = async (name: string): Promise<string> => {
  const answer = await (await fetch(`${server.url}/admin/hosts`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json() as {
    hosts: Array<{ hostId: string; name: string }>
  }
  return answer.hosts.find((h) => h.name === name)?.hostId ?? ""
}

/** At 375 px the page does not scroll sideways: what is too wide scrolls in its own region. */
const fitsAPhone = async (p: Page) => {
  const before = p.viewportSize()
  await p.setViewportSize({ width: 375, height: 800 })
  try {
    assert.isAtMost(await p.evaluate(() => document.documentElement.scrollWidth), 375, `${p.url()} is wider than a phone`)
  } finally {
    if (before !== null) await p.setViewportSize(before)
  }
}

let taskPath = ""
let agentPath = ""

describe("the operator's console", () => {
  it("follows a host agent's task decisions as they happen; the provider key is shown nowhere", async () => {
    // A provider profile, its key typed into a write-only field.
    await page.goto(`${server.url}/operator/profiles`)
    await signIn(page)
    await heading(page, "Provider profiles").waitFor()
    await page.getByLabel("Name", { exact: true }).fill("stand-in")
    await page.getByLabel("Model", { exact: true }).fill("stand-in-model")
    await page.getByLabel(/^Base URL/).fill(provider.url)
    const key = page.getByLabel("API key", { exact: true })
    assert.strictEqual(await key.getAttribute("type"), "password")
    assert.strictEqual(await key.getAttribute("autocomplete"), "off")
    await key.fill(SECRET_KEY)
    await page.getByRole("button", { name: "Create profile" }).click()
    await page.getByRole("row", { name: /stand-in-model/ }).waitFor()
    assert.strictEqual(await key.inputValue(), "", "the key field is emptied once sent")
    await page.getByRole("button", { name: "Activate stand-in" }).click()
    await page.getByRole("row", { name: /stand-in-model/ }).getByText("Active").waitFor()
    await visited()

    // A host: its token shown once, with a copy button.
    await page.getByRole("link", { name: "Hosts", exact: true }).click()
    await heading(page, "Hosts").waitFor()
    await page.getByText("No hosts yet").waitFor()
    await page.getByLabel("Name", { exact: true }).fill("build-box")
    await page.getByRole("button", { name: "Register host" }).click()
    const token = (await page.getByTestId("host-token").textContent()) ?? ""
    const hostId = /Host (\S+) registered/.exec((await page.getByRole("heading", { name: /registered/ }).textContent()) ?? "")?.[1] ?? ""
    assert.isAbove(token.length, 20)
    assert.match(hostId, /^[\w.:-]+$/)
    await page.getByRole("button", { name: "Copy token" }).click()
    await page.getByText("Copied.").waitFor()
    assert.strictEqual(await page.evaluate(() => navigator.clipboard.readText()), token)
    await page.getByRole("button", { name: "I have saved it" }).click()
    await page.getByRole("row", { name: /build-box/ }).getByText("Offline (never seen)").waitFor()
    assert.notInclude(await page.content(), token, "the token is gone once dismissed")
    await page.reload()
    await page.getByRole("row", { name: /build-box/ }).waitFor()
    assert.notInclude(await page.content(), token, "and never shown again")
    await visited()

    // A task for that host, then its page.
    await page.getByRole("link", { name: "Tasks", exact: true }).click()
    await heading(page, "Tasks").waitFor()
    const queue = page.getByRole("form", { name: "Queue a task" })
    await queue.getByLabel("Goal").fill(GOAL)
    await queue.getByLabel("Host").selectOption(hostId)
    await queue.getByRole("button", { name: "Queue task" }).click()
    await page.getByRole("row", { name: new RegExp(GOAL) }).getByText("queued").waitFor()
    await visited()
    await page.getByRole("status").getByRole("link").click()
    await heading(page, `Task: ${GOAL}`).waitFor()
    taskPath = new URL(page.url()).pathname
    const taskId = decodeURIComponent(taskPath.split("/").pop()!)
    await page.getByText("No decision yet.").waitFor()
    // Whatever follows appears without a reload: this mark would be gone after one.
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true))

    // The host agent: heartbeat, claim, then one decision at a time, each seen on the page.
    const agent = host(hostId, token)
    await agent.heartbeat()
    const { task } = await agent.claim()
    assert.strictEqual(task.taskId, taskId)
    await page.getByText("Following the task: refreshed every 2 s while it is running.", { exact: false }).waitFor()
    for (const step of [0, 1, 2]) {
      const decision = await agent.decide(taskId, task.attempt, step)
      assert.strictEqual(decision.stepIndex, step)
      const item = page.getByRole("listitem", { name: `Step ${step}: click` })
      await item.waitFor()
      assert.include(await item.getByLabel(`Arguments of step ${step}`).textContent(), `"target": "button-${step}"`)
      // The prompts are there, folded.
      const details = item.locator("details")
      assert.isFalse(await details.evaluate((el) => (el as HTMLDetailsElement).open))
      assert.include(await details.textContent(), `Steps taken so far: ${step}`)
      assert.strictEqual(await page.getByRole("listitem", { name: /^Step \d+: click$/ }).count(), step + 1)
    }
    await page.getByText("3 decisions so far.", { exact: false }).waitFor()
    await page.locator("details").first().locator("summary").click()
    await visited()
    await agent.result(taskId, task.attempt)
    await page.getByText("The task ended (succeeded).").waitFor()
    await page.getByText("the box is tidy").waitFor()
    assert.isTrue(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded === true), "no reload")
    // The provider was called with the key the profile holds.
    assert.deepStrictEqual(provider.keys, [`Bearer ${SECRET_KEY}`, `Bearer ${SECRET_KEY}`, `Bearer ${SECRET_KEY}`])

    // The task ended: the page stops asking.
    const asked = () => requested.filter((path) => path === `/admin/tasks/${taskId}`).length
    const before = asked()
    await page.waitForTimeout(4_500)
    assert.strictEqual(asked(), before, "no polling once the task ended")
    await visited()

    // The host is online now, and the hosts page lists the task under it.
    await page.getByRole("link", { name: "Hosts", exact: true }).click()
    await page.getByRole("row", { name: /build-box/ }).getByText("Online").waitFor()
    await page.getByRole("link", { name: "Tasks of build-box" }).click()
    await heading(page, "Tasks").waitFor()
    assert.strictEqual(new URL(page.url()).searchParams.get("hostId"), hostId)
    await page.getByRole("row", { name: new RegExp(GOAL) }).getByText("succeeded").waitFor()
    await page.getByLabel("Status", { exact: true }).selectOption("running")
    await page.getByText("No tasks match these filters.").waitFor()
    assert.strictEqual(new URL(page.url()).searchParams.get("status"), "running")
    await visited()

    // The key: in no page, no response body, no log.
    const received = await Promise.all(bodies)
    assert.isAbove(received.length, 10)
    for (const html of pages) assert.notInclude(html, SECRET_KEY)
    for (const body of received) assert.notInclude(body, SECRET_KEY)
    assert.notInclude(server.output(), SECRET_KEY)
    assert.include(server.output(), "Listening on")
  }, 120_000)

  it("usage: the planner's calls per kind and per host; a host's budget set and cleared in its dialog", async () => {
    // The first test's three decisions, one input and one output token each.
    await page.goto(`${server.url}/operator/usage`)
    await heading(page, "Usage").waitFor()
    const planner = page.getByRole("row", { name: /planner decisions/ })
    await planner.waitFor()
    assert.deepStrictEqual(await planner.getByRole("cell").allTextContents(), ["3", "3", "0", "3"])
    await page.getByLabel("Per", { exact: true }).selectOption("host")
    const byHost = page.getByRole("row", { name: /build-box/ })
    await byHost.waitFor()
    assert.strictEqual(new URL(page.url()).searchParams.get("groupBy"), "host")
    assert.deepStrictEqual(await byHost.getByRole("cell").allTextContents(), ["3", "3", "0", "3"])
    await expectNoSeriousAxeViolations(page)
    await fitsAPhone(page)
    await screenshot(page, "operator-usage-hosts")
    await page.getByRole("link", { name: "build-box" }).click()
    await heading(page, "Tasks").waitFor()
    await page.getByRole("row", { name: new RegExp(GOAL) }).waitFor()

    // Its budget: none, 6 tokens used; set to 5, a decision is then refused; back to the default.
    await page.getByRole("link", { name: "Hosts", exact: true }).click()
    await page.getByRole("button", { name: "Budget of build-box" }).click()
    const dialog = page.getByRole("dialog", { name: "Budget of build-box" })
    const facts = dialog.getByTestId("budget-facts")
    await facts.getByText("6 tokens over the last 24 hours").waitFor()
    assert.include(await facts.textContent(), "none a day")
    await dialog.getByLabel(/Its own budget/).fill("a lot")
    await dialog.getByRole("button", { name: "Save budget" }).click()
    await dialog.getByRole("alert").filter({ hasText: "whole number" }).waitFor()
    await dialog.getByLabel(/Its own budget/).fill("5")
    await dialog.getByRole("button", { name: "Save budget" }).click()
    await facts.getByText("5 tokens a day").waitFor()
    await expectNoSeriousAxeViolations(page)
    await fitsAPhone(page)
    await screenshot(page, "operator-dialog-budget")
    const budget = await (await fetch(`${server.url}/admin/hosts/${encodeURIComponent(await hostIdOf("build-box"))}/budget`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` }
    })).json() as { effectiveDailyTokens: number; usedTokens: number }
    assert.deepInclude(budget, { effectiveDailyTokens: 5, usedTokens: 6 })
    await dialog.getByRole("button", { name: "Use the default" }).click()
    await facts.getByText("none a day").waitFor()
    await page.keyboard.press("Escape")
    await dialog.waitFor({ state: "hidden" })
  }, 120_000)

  it("issues a host a new token, revokes a host, cancels a task and rotates the credential key, each after a confirmation that Escape dismisses; prunes", async () => {
    await page.goto(`${server.url}/operator/hosts`)
    await page.getByLabel("Name", { exact: true }).fill("spare-box")
    await page.getByRole("button", { name: "Register host" }).click()
    const firstToken = (await page.getByTestId("host-token").textContent())!
    const hostId = (await page.getByRole("heading", { name: /registered$/ }).textContent())!.replace(/^Host (\S+) registered$/, "$1")
    await page.getByRole("button", { name: "I have saved it" }).click()

    // A new token: shown once, the old one refused from then on.
    await page.getByRole("button", { name: "New token for spare-box" }).click()
    const newTokenDialog = page.getByRole("dialog", { name: "A new token for spare-box?" })
    await newTokenDialog.getByRole("button", { name: "Issue a new token" }).click()
    await newTokenDialog.waitFor({ state: "hidden" })
    await page.getByRole("heading", { name: `Host ${hostId}: new token` }).waitFor()
    const newToken = (await page.getByTestId("host-token").textContent())!
    assert.notStrictEqual(newToken, firstToken)
    const heartbeat = (token: string) =>
      fetch(`${server.url}/internal/hosts/${hostId}/heartbeat`, { method: "POST", headers: { authorization: `Bearer ${token}` } })
    assert.strictEqual((await heartbeat(firstToken)).status, 401)
    assert.isTrue((await heartbeat(newToken)).ok)
    await page.getByRole("button", { name: "I have saved it" }).click()
    assert.strictEqual(await page.getByTestId("host-token").count(), 0, "the token is gone from the page")

    const revoke = page.getByRole("button", { name: "Revoke spare-box" })
    await revoke.click()
    const dialog = page.getByRole("dialog", { name: "Revoke spare-box?" })
    await dialog.waitFor()
    // Focus is in the dialog (on Cancel), and stays there as Tab moves on.
    assert.strictEqual(await page.evaluate(() => document.activeElement?.textContent), "Cancel")
    await page.keyboard.press("Tab")
    assert.strictEqual(await page.evaluate(() => document.activeElement?.textContent), "Revoke host")
    await expectNoSeriousAxeViolations(page)
    await fitsAPhone(page)
    await screenshot(page, "operator-dialog-revoke")
    await page.keyboard.press("Escape")
    await dialog.waitFor({ state: "hidden" })
    assert.strictEqual(await page.evaluate(() => document.activeElement?.textContent), "Revoke spare-box", "focus back on its opener")
    await page.getByRole("row", { name: /spare-box/ }).getByText("Offline (never seen)").waitFor()

    await revoke.click()
    await dialog.getByRole("button", { name: "Revoke host" }).click()
    await dialog.waitFor({ state: "hidden" })
    await page.getByRole("row", { name: /spare-box/ }).getByText("Revoked", { exact: true }).waitFor()
    assert.strictEqual(await page.getByRole("button", { name: "Revoke spare-box" }).count(), 0)

    // A task for any host, cancelled from its page.
    await page.goto(`${server.url}/operator/tasks`)
    const queue = page.getByRole("form", { name: "Queue a task" })
    await queue.getByLabel("Goal").fill("never to run")
    await queue.getByRole("button", { name: "Queue task" }).click()
    await page.getByRole("status").getByRole("link").click()
    await heading(page, "Task: never to run").waitFor()
    await page.getByRole("button", { name: "Cancel task" }).click()
    const cancel = page.getByRole("dialog", { name: "Cancel this task?" })
    await cancel.getByRole("button", { name: "Cancel task" }).click()
    await cancel.waitFor({ state: "hidden" })
    await page.getByText("The task ended (cancelled).").waitFor()
    assert.strictEqual(await page.getByRole("button", { name: "Cancel task" }).count(), 0)

    // The credential key rotated (after its confirmation), and the decisions pruned now.
    await page.goto(`${server.url}/operator/profiles`)
    await page.getByRole("button", { name: "Rotate credential key…" }).click()
    const rotate = page.getByRole("dialog", { name: "Re-encrypt every stored key?" })
    await rotate.getByRole("button", { name: "Rotate" }).click()
    await rotate.waitFor({ state: "hidden" })
    await page.getByText(/0 re-encrypted, 1 already current\./).waitFor()
    await page.getByRole("button", { name: "Prune decisions now" }).click()
    await page.getByText("0 decisions deleted.").waitFor()
  }, 120_000)

  it("agents: the built-in read-only; create with the JSON checked, the server's refusals at their field; edit; delete; delete a chat", async () => {
    await page.goto(`${server.url}/operator/agents`)
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
    agentPath = new URL(page.url()).pathname

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

  it("usage: a page left open asks for the last 24 hours at each refresh, not for everything since it opened", async () => {
    const open = await newPage(browser)
    try {
      await open.clock.install()
      await open.goto(`${server.url}/operator/usage`)
      await signIn(open)
      await open.getByRole("row", { name: /planner decisions/ }).waitFor()
      // Two days later, the next refresh (every 15 s).
      await open.clock.fastForward("50:00:00")
      const refresh = open.waitForRequest((request) => new URL(request.url()).pathname === "/admin/usage")
      await open.clock.runFor(16_000)
      const from = Date.parse(new URL((await refresh).url()).searchParams.get("from") ?? "")
      const browserNow = await open.evaluate(() => Date.now())
      assert.approximately(browserNow - from, 24 * 3_600_000, 60_000)
    } finally {
      await open.context().close()
    }
  }, 60_000)

  it("every operator page: axe clean, screenshotted at 375 and 1440 px, light and dark", async () => {
    assert.notStrictEqual(taskPath, "")
    const dark = await newPage(browser, { colorScheme: "dark" })
    watch(dark)
    try {
      await dark.goto(`${server.url}/operator/hosts`)
      await signIn(dark)
      const shots: Array<readonly [string, string, (p: Page) => Promise<void>]> = [
        ["hosts", "/operator/hosts", (p) => p.getByRole("row", { name: /build-box/ }).waitFor()],
        ["tasks", "/operator/tasks", (p) => p.getByRole("row", { name: new RegExp(GOAL) }).waitFor()],
        ["task", taskPath, (p) => p.getByRole("listitem", { name: "Step 2: click" }).waitFor()],
        ["profiles", "/operator/profiles", (p) => p.getByRole("row", { name: /stand-in-model/ }).waitFor()],
        ["agents", "/operator/agents", async (p) => {
          await p.getByRole("row", { name: /media-editor/ }).waitFor()
          await p.getByRole("article", { name: "translator" }).waitFor()
        }],
        ["usage", "/operator/usage", (p) => p.getByRole("row", { name: /planner decisions/ }).waitFor()],
        ["agent-new", "/operator/agents", (p) => p.getByRole("button", { name: "Create agent" }).waitFor()]
      ]
      for (const [scheme, p] of [["light", page], ["dark", dark]] as const) {
        for (const [name, path, ready] of shots) {
          await p.goto(`${server.url}${path}`)
          await ready(p)
          await expectNoSeriousAxeViolations(p)
          await fitsAPhone(p)
          pages.push(await p.content())
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
      for (const html of pages) assert.notInclude(html, SECRET_KEY)
      for (const body of await Promise.all(bodies)) assert.notInclude(body, SECRET_KEY)
      for (const body of await Promise.all(bodies)) assert.notInclude(body, HEADER_SECRET)
    } finally {
      await dark.context().close()
    }
  }, 120_000)
})
