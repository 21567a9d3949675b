/**
 * The operator's hosts, tasks, profiles and usage pages in Chromium against the built server, with
 * a stand-in OpenAI-compatible provider on a local port for the planner (the profile created in the
 * console points at it): support/OperatorHarness.ts. The agents page and the sub-agent kinds are
 * OperatorAgents.test.ts's.
 *
 * A host agent is simulated by the test itself over HTTP, with plain `fetch` and the host token the
 * console showed once: heartbeat, claim, one planner decision at a time, result — while the task's
 * page, open in the browser, shows each decision as it is taken, without a reload.
 *
 * The provider key typed into the profile form is looked for everywhere it must not be: the HTML of
 * every operator page visited, every response body the console received, the server's output.
 */
import type { Browser, Page } from "playwright-core"
import { assert, beforeAll, describe, it } from "vitest"
import { expectNoSeriousAxeViolations, newPage, screenshot } from "./support/ConsoleHarness.ts"
import type { ConsoleServer } from "./support/ConsoleHarness.ts"
import { ADMIN_TOKEN, fitsAPhone, heading, SECRET_KEY, useOperatorConsole } from "./support/OperatorHarness.ts"

const GOAL = "tidy the build box"

const operator = useOperatorConsole({ provider: true })
const { requested, signIn, visited, watch } = operator
let server: ConsoleServer
let browser: Browser
let page: Page
beforeAll(() => void ({ server, browser, page } = operator))

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
    decide: (taskId: string, attempt: number, step: number, padding = "") =>
      post("/internal/planner/decision", {
        hostId,
        taskId,
        attempt,
        systemPrompt: "You operate a build box. Call exactly one tool.",
        userPrompt: `Goal: ${GOAL}\nSteps taken so far: ${step}${padding}`,
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

let taskPath = ""

describe("the operator's console", () => {
  it("follows a host agent's task decisions as they happen; the provider key is shown nowhere", async () => {
    // A provider profile, its key typed into a write-only field.
    await page.goto(`${server.url}/operator/profiles`)
    await signIn(page)
    await heading(page, "Provider profiles").waitFor()
    await page.getByLabel("Name", { exact: true }).fill("stand-in")
    await page.getByLabel("Model", { exact: true }).fill("stand-in-model")
    await page.getByLabel(/^Base URL/).fill(operator.provider.url)
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
    assert.deepStrictEqual(operator.provider.keys, [`Bearer ${SECRET_KEY}`, `Bearer ${SECRET_KEY}`, `Bearer ${SECRET_KEY}`])

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
    const received = await operator.received()
    assert.isAbove(received.length, 10)
    for (const html of operator.pages) assert.notInclude(html, SECRET_KEY)
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

  it("the hosts, tasks, task, profiles and usage pages: axe clean, screenshotted at 375 and 1440 px, light and dark", async () => {
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
        ["usage", "/operator/usage", (p) => p.getByRole("row", { name: /planner decisions/ }).waitFor()]
      ]
      for (const [scheme, p] of [["light", page], ["dark", dark]] as const) {
        for (const [name, path, ready] of shots) {
          await p.goto(`${server.url}${path}`)
          await ready(p)
          await expectNoSeriousAxeViolations(p)
          await fitsAPhone(p)
          await visited(p)
          await screenshot(p, `operator-${name}-${scheme}`)
        }
      }
      await operator.expectNoSecretShown()
    } finally {
      await dark.context().close()
    }
  }, 120_000)

  // Last: its decisions would count in the usage tests above.
  it("a task whose decision log runs past a page shows the first page, the next when asked, then follows only the new decisions", async () => {
    const asAdmin = async (path: string, body: unknown) => {
      const response = await fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify(body)
      })
      assert.strictEqual(response.status, 201, await response.clone().text())
      return await response.json()
    }
    const { hostId, token } = await asAdmin("/admin/hosts", { name: "long-log-box" }) as { hostId: string; token: string }
    const { taskId } = await asAdmin("/admin/tasks", { goal: "read a long log", hostId }) as { taskId: string }
    const agent = host(hostId, token)
    const { task } = await agent.claim()
    // Five decisions of ~4 MiB prompts: a page ends before 16 MiB, after the third or the fourth.
    for (const step of [0, 1, 2, 3, 4]) await agent.decide(taskId, task.attempt, step, "\n" + ".".repeat(4 * 1024 * 1024 - 200))
    await page.goto(`${server.url}/operator/tasks/${encodeURIComponent(taskId)}`)
    const note = page.getByText(/The first \d+ decisions are shown\./)
    await note.waitFor()
    const steps = page.getByRole("listitem", { name: /^Step \d+: click$/ })
    const shown = await steps.count()
    assert.isBelow(shown, 5)
    assert.include(await note.textContent(), `The first ${shown} decisions`)
    assert.include(await note.textContent(), `switchboard admin decisions ${taskId}`)
    await page.getByText(`More than ${shown} decisions so far.`, { exact: false }).waitFor()
    await fitsAPhone(page)
    await screenshot(page, "operator-task-long-log")

    // The rest when asked; then, while the task runs, each new decision alone as the host takes it.
    await page.getByRole("button", { name: "Show more decisions" }).click()
    await page.getByText("5 decisions so far.", { exact: false }).waitFor()
    assert.strictEqual(await note.count(), 0, "nothing more to show")
    await agent.decide(taskId, task.attempt, 5, "a short prompt")
    await page.getByText("6 decisions so far.", { exact: false }).waitFor()
    assert.deepStrictEqual(
      await steps.evaluateAll((items) => items.map((item) => item.getAttribute("aria-label"))),
      [0, 1, 2, 3, 4, 5].map((n) => `Step ${n}: click`)
    )
    await screenshot(page, "operator-task-long-log-all")
  }, 120_000)
})
