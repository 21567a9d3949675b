/**
 * The console in Chromium against the built server (packages/web/test/support/ConsoleHarness.ts):
 * the sign-in of each realm (a wrong token asked again, the right one kept in sessionStorage only,
 * a later 401 asks again), the navigation by keyboard with the operator's pages loaded on demand,
 * the headers of what the server serves, the strict policy enforced in the page, the demo frame
 * running a posted page's inline script while it reaches nothing of the console's, axe-core, and
 * screenshots at both widths.
 */
import type { Browser, Page, Request } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import {
  expectNoSeriousAxeViolations,
  launchBrowser,
  newPage,
  screenshot,
  startConsoleServer
} from "./support/ConsoleHarness.ts"
import type { ConsoleServer } from "./support/ConsoleHarness.ts"

const CHAT_TOKEN = "chat-token-7d1f2a9c"
const ADMIN_TOKEN = "admin-token-3b8e6f04"

const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; frame-src 'self'; " +
  "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
const SANDBOX_CSP =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; font-src data:; " +
  "media-src data: blob:; connect-src 'none'; form-action 'none'; base-uri 'none'; sandbox allow-scripts"

let server: ConsoleServer
let browser: Browser
let page: Page
const requested: Array<string> = []

beforeAll(async () => {
  ;[server, browser] = await Promise.all([startConsoleServer({ CHAT_TOKEN, ADMIN_TOKEN }), launchBrowser()])
  page = await newPage(browser)
  page.on("request", (request: Request) => void requested.push(new URL(request.url()).pathname))
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
})

const heading = (name: string) => page.getByRole("heading", { level: 1, name })

const signInWith = async (token: string) => {
  await page.getByLabel(/token/).fill(token)
  await page.getByRole("button", { name: "Sign in" }).click()
}

/** Every value of both storages, and the page's URL: where a token must (not) be. */
const storages = () =>
  page.evaluate(() => ({
    session: Object.fromEntries(Object.entries(sessionStorage)),
    local: Object.values(localStorage).join("\n"),
    url: location.href
  }))

describe("the web console", () => {
  it("asks for the chat token, asks again for a wrong one, keeps the right one in sessionStorage only", async () => {
    await page.goto(`${server.url}/`)
    await heading("Sign in to chat").waitFor()
    await expectNoSeriousAxeViolations(page)
    await screenshot(page, "sign-in")

    await signInWith("not-the-token")
    await page.getByRole("alert").filter({ hasText: "refused" }).waitFor()
    await heading("Sign in to chat").waitFor()
    assert.deepStrictEqual((await storages()).session, {})
    await expectNoSeriousAxeViolations(page)
    await screenshot(page, "sign-in-refused")

    await signInWith(CHAT_TOKEN)
    await heading("Chat").waitFor()
    await page.getByText("Connected: agent media-editor.").waitFor()
    const after = await storages()
    assert.deepStrictEqual(after.session, { "switchboard.chatToken": CHAT_TOKEN })
    assert.notInclude(after.local, CHAT_TOKEN)
    assert.notInclude(after.url, CHAT_TOKEN)
    await expectNoSeriousAxeViolations(page)
    await screenshot(page, "chat")

    // Kept across a reload of the tab.
    await page.reload()
    await page.getByText("Connected: agent media-editor.").waitFor()
  })

  it("a later 401 asks again: a token the server no longer takes is dropped", async () => {
    await page.evaluate(() => sessionStorage.setItem("switchboard.chatToken", "rotated-away"))
    await page.reload()
    await heading("Sign in to chat").waitFor()
    assert.deepStrictEqual((await storages()).session, {})
    await signInWith(CHAT_TOKEN)
    await page.getByText("Connected: agent media-editor.").waitFor()
  })

  it("the keyboard reaches the operator's pages, each loaded on demand, behind ADMIN_TOKEN", async () => {
    assert.isFalse(requested.some((path) => /\/assets\/HostsPage-/.test(path)), "the operator's pages are not in the first load")
    // From the top of a fresh page: the chat has controls of its own after the sign-in form's place.
    await page.reload()
    await heading("Chat").waitFor()
    await page.keyboard.press("Tab")
    assert.strictEqual(await page.evaluate(() => document.activeElement?.textContent), "Skip to content")
    let focused = ""
    for (let i = 0; i < 8 && focused !== "Hosts"; i++) {
      await page.keyboard.press("Tab")
      focused = await page.evaluate(() => document.activeElement?.textContent ?? "")
    }
    assert.strictEqual(focused, "Hosts")
    await page.keyboard.press("Enter")
    await heading("Sign in as operator").waitFor()
    assert.strictEqual(new URL(page.url()).pathname, "/operator/hosts")
    assert.isTrue(requested.some((path) => /\/assets\/HostsPage-[\w-]+\.js$/.test(path)))

    await signInWith(CHAT_TOKEN)
    await page.getByRole("alert").filter({ hasText: "refused" }).waitFor()
    await signInWith(ADMIN_TOKEN)
    await heading("Hosts").waitFor()
    await page.getByText("No hosts yet").waitFor()
    assert.strictEqual(await page.getByRole("link", { name: "Hosts" }).getAttribute("aria-current"), "page")
    const after = await storages()
    assert.deepStrictEqual(after.session, { "switchboard.chatToken": CHAT_TOKEN, "switchboard.adminToken": ADMIN_TOKEN })
    assert.notInclude(after.local, ADMIN_TOKEN)
    await expectNoSeriousAxeViolations(page)
    await screenshot(page, "operator-hosts")

    for (const name of ["Tasks", "Profiles", "Agents"]) {
      await page.getByRole("link", { name }).click()
      await heading(name).waitFor()
    }
    // Back to the chat, and a page that does not exist.
    await page.goBack()
    await heading("Profiles").waitFor()
    await page.getByRole("link", { name: "Chat" }).click()
    await heading("Chat").waitFor()
    await page.goto(`${server.url}/operator/nothing-here`)
    await heading("Not found").waitFor()
  })

  it("headers: the console's documents under the strict policy, assets immutable, the demo frame under its own", async () => {
    const index = await fetch(`${server.url}/chats/some-chat`)
    assert.strictEqual(index.status, 200)
    assert.strictEqual(index.headers.get("content-security-policy"), CONSOLE_CSP)
    assert.strictEqual(index.headers.get("cache-control"), "no-cache")
    assert.strictEqual(index.headers.get("x-content-type-options"), "nosniff")
    assert.strictEqual(index.headers.get("referrer-policy"), "no-referrer")
    const html = await index.text()
    assert.notMatch(html, /<script(?![^>]*\ssrc=)[^>]*>/, "no inline script")
    assert.notMatch(html, /\sstyle=/, "no style attribute")

    const entry = /<script[^>]*src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1]
    assert.isDefined(entry)
    const asset = await fetch(`${server.url}${entry}`)
    assert.strictEqual(asset.status, 200)
    assert.strictEqual(asset.headers.get("cache-control"), "public, max-age=31536000, immutable")
    assert.strictEqual(asset.headers.get("content-type"), "text/javascript; charset=utf-8")
    // React's production build (its error decoder's address), even built from the tests (NODE_ENV=test).
    assert.include(await asset.text(), "react.dev/errors")

    const sandbox = await fetch(`${server.url}/sandbox.html`)
    assert.strictEqual(sandbox.status, 200)
    assert.strictEqual(sandbox.headers.get("content-security-policy"), SANDBOX_CSP)

    const traversal = await fetch(`${server.url}/assets/%2e%2e%2findex.html`)
    assert.strictEqual(traversal.status, 404)
    const docs = await fetch(`${server.url}/docs`)
    assert.strictEqual(docs.status, 200)
    assert.strictEqual((await (await fetch(`${server.url}/api/nope`)).json()).code, "not_found")
  })

  it("the page's own policy holds, and a demo posted to the sandbox runs its inline script there, cut off from the console", async () => {
    await page.goto(`${server.url}/`)
    await heading("Chat").waitFor()
    // An inline script in the console is refused by its policy.
    await page.addScriptTag({ content: "window.inlineRan = true" }).catch(() => undefined)
    assert.isFalse(await page.evaluate(() => "inlineRan" in window))

    const demo = `<!doctype html><html><body><p id="out">waiting</p><script>
      const results = []
      try { parent.document.title; results.push("parent:reachable") } catch { results.push("parent:blocked") }
      try { localStorage.length; results.push("storage:reachable") } catch { results.push("storage:blocked") }
      document.getElementById("out").textContent = "demo ran: " + results.join(" ")
    </script></body></html>`
    await page.evaluate(async (html) => {
      const frame = document.createElement("iframe")
      frame.setAttribute("sandbox", "allow-scripts")
      frame.title = "demo"
      frame.src = "/sandbox.html"
      const loaded = new Promise((done) => frame.addEventListener("load", done, { once: true }))
      document.querySelector("main")!.append(frame)
      await loaded
      frame.contentWindow!.postMessage({ type: "switchboard-demo", html }, "*")
    }, demo)
    const frame = page.frameLocator("iframe[title=demo]")
    await frame.getByText(/^demo ran:/).waitFor()
    assert.strictEqual(await frame.locator("#out").textContent(), "demo ran: parent:blocked storage:blocked")
    assert.strictEqual(await page.locator("iframe[title=demo]").getAttribute("sandbox"), "allow-scripts")
    // The console's own token is where it was, untouched by the demo.
    assert.strictEqual((await storages()).session["switchboard.chatToken"], CHAT_TOKEN)
  })

  it("in dark mode too: no serious axe violation", async () => {
    const dark = await newPage(browser, { colorScheme: "dark" })
    try {
      await dark.goto(`${server.url}/`)
      await dark.getByRole("heading", { level: 1, name: "Sign in to chat" }).waitFor()
      await expectNoSeriousAxeViolations(dark)
      await screenshot(dark, "sign-in-dark")
    } finally {
      await dark.context().close()
    }
  })
})
