/**
 * The console with users (docs/users.md) in Chromium against the built server started with
 * `AUTH_JWT_SECRET` (packages/web/test/support/ConsoleHarness.ts): the sign-in takes a user's JWT
 * and says who is signed in; two users in two browser contexts each list only their own chats, a
 * second browser of the same user lists the same ones (from `GET /api/chats`, not this browser's
 * storage) and deletes one for both; signing out forgets the tab's token and the kept list. And no
 * leak through the page: an answer's remote markdown image (and a raw `<img>`) becomes a link and
 * its server sees no request, while an image of an origin in `CONSOLE_IMAGE_ORIGINS` loads, under
 * a Content-Security-Policy that says the same. A bad `CONSOLE_IMAGE_ORIGINS` refuses to start.
 */
import { runServerProcess, signWithSecret } from "@switchboard/server/testing"
import { Effect } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Browser, Page } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import {
  expectNoSeriousAxeViolations,
  launchBrowser,
  newPage,
  screenshot,
  startConsoleServer,
  VIEWPORTS
} from "./support/ConsoleHarness.ts"
import type { ConsoleServer } from "./support/ConsoleHarness.ts"

const SECRET = "console-users-test-secret-0123456789-abcdef"
const ADMIN_TOKEN = "admin-token-5c2e9b71"

/** A 1×1 PNG. */
const PIXEL = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=",
  "base64"
)

interface OtherOrigin {
  readonly url: string
  /** Every path asked for, in order. */
  readonly requests: Array<string>
  readonly close: () => Promise<void>
}

/** A server on another origin (another port of 127.0.0.1), answering a PNG to anything, counting requests. */
const startOtherOrigin = async (): Promise<OtherOrigin> => {
  const requests: Array<string> = []
  const server = createServer((request, response) => {
    requests.push(request.url ?? "")
    response.writeHead(200, { "content-type": "image/png", "cache-control": "no-store" }).end(PIXEL)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

let server: ConsoleServer
let browser: Browser
let leak: OtherOrigin
let images: OtherOrigin
let scriptDir: string
let alice: string
let bob: string
const pages: Array<Page> = []

/** A fresh browser context (its own storages), on the console, signed in with `token`. */
const signedIn = async (token: string, user: string): Promise<Page> => {
  const page = await newPage(browser)
  pages.push(page)
  await page.goto(`${server.url}/`)
  await page.getByRole("heading", { level: 1, name: "Sign in to chat" }).waitFor()
  await page.getByLabel(/token/).fill(token)
  await page.getByRole("button", { name: "Sign in" }).click()
  await page.getByRole("heading", { level: 1, name: "Chat" }).waitFor()
  await page.locator(".account-who", { hasText: `Signed in as ${user}` }).waitFor()
  return page
}

const send = async (page: Page, text: string) => {
  const composer = page.getByLabel("Message", { exact: true })
  await composer.fill(text)
  await composer.press("Enter")
  await page.locator(".msg-assistant").last().getByText(`You said: ${text}`).waitFor()
  await page.locator('.chat-status[data-status="idle"]').waitFor()
}

const listed = (page: Page) => page.locator(".conversation-list .conversation-title").allTextContents()

/** The list once it holds exactly `titles` (in any order): the server's answer replaces the first paint. */
const waitForList = async (page: Page, titles: ReadonlyArray<string>) => {
  const deadline = Date.now() + 15_000
  let last: ReadonlyArray<string> = []
  while (Date.now() < deadline) {
    last = await listed(page)
    if (last.length === titles.length && titles.every((title) => last.includes(title))) return
    await page.waitForTimeout(100)
  }
  assert.fail(`the list shows ${JSON.stringify(last)}, expected ${JSON.stringify(titles)}`)
}

const apiChats = async (token: string) => {
  const response = await fetch(`${server.url}/api/chats`, { headers: { authorization: `Bearer ${token}` } })
  assert.strictEqual(response.status, 200)
  return ((await response.json()) as { chats: Array<{ chatId: string; title: string }> }).chats
}

beforeAll(async () => {
  ;[leak, images] = await Promise.all([startOtherOrigin(), startOtherOrigin()])
  scriptDir = mkdtempSync(join(tmpdir(), "switchboard-users-script-"))
  const script = join(scriptDir, "script.json")
  writeFileSync(script, JSON.stringify({
    description: "Users.test.ts: an answer with images of three origins; an echo otherwise.",
    rules: [{
      when: { lastRole: "user", contains: "picture" },
      reply: {
        content: [
          "Here are the charts.",
          "",
          `![secret chart](${leak.url}/leak?q=secret)`,
          "",
          `<img src="${leak.url}/raw?q=secret" alt="raw chart">`,
          "",
          `![](${leak.url}/bare?q=secret)`,
          "",
          `![allowed chart](${images.url}/pixel.png)`
        ].join("\n")
      }
    }],
    fallback: { content: "You said: {{lastUserMessage}}", pieceDelayMs: 5 }
  }))
  ;[server, browser] = await Promise.all([
    startConsoleServer({ AUTH_JWT_SECRET: SECRET, LLM_SCRIPT: script, CONSOLE_IMAGE_ORIGINS: `${images.url}/`, ADMIN_TOKEN }),
    launchBrowser()
  ])
  ;[alice, bob] = await Promise.all([
    signWithSecret(SECRET, { sub: "alice", expiresIn: 3600 }),
    signWithSecret(SECRET, { sub: "bob", expiresIn: 3600 })
  ])
}, 180_000)

afterAll(async () => {
  for (const page of pages) await page.context().close().catch(() => undefined)
  await browser?.close()
  await server?.close()
  await leak?.close()
  await images?.close()
  if (scriptDir !== undefined) rmSync(scriptDir, { recursive: true, force: true })
})

describe("the console with users", () => {
  let alicePage: Page

  it("two users in two browsers: each signs in with a JWT, is named, and lists only their own chats; a second browser of one lists the same", async () => {
    const first = await newPage(browser)
    pages.push(first)
    await first.goto(`${server.url}/`)
    await first.getByRole("heading", { level: 1, name: "Sign in to chat" }).waitFor()
    await first.getByText(/sign-in token \(a JWT\)/).waitFor()
    await expectNoSeriousAxeViolations(first)
    await screenshot(first, "users-sign-in")
    await first.getByLabel(/token/).fill(alice)
    await first.getByRole("button", { name: "Sign in" }).click()
    await first.locator(".account-who", { hasText: "Signed in as alice" }).waitFor()
    alicePage = first

    const bobPage = await signedIn(bob, "bob")
    await send(alicePage, "Hello from alice")
    await send(bobPage, "Hello from bob")
    // Alice's second chat.
    await alicePage.getByRole("button", { name: "New chat" }).click()
    await alicePage.getByRole("button", { name: "Start chat" }).click()
    await alicePage.getByText("No messages yet.").waitFor()
    await send(alicePage, "Second chat of alice")

    await waitForList(alicePage, ["Second chat of alice", "Hello from alice"])
    await waitForList(bobPage, ["Hello from bob"])
    assert.deepStrictEqual((await apiChats(alice)).map((c) => c.title), ["Second chat of alice", "Hello from alice"])
    assert.deepStrictEqual((await apiChats(bob)).map((c) => c.title), ["Hello from bob"])
    await expectNoSeriousAxeViolations(alicePage)
    await screenshot(alicePage, "users-signed-in")

    // A second browser of alice's (a fresh context: nothing of hers in its storage): the same list, from the server.
    const again = await signedIn(alice, "alice")
    // The conversation in view (a new one, empty) is listed first, as always.
    await waitForList(again, ["New chat", "Second chat of alice", "Hello from alice"])
    await again.getByRole("link", { name: /Hello from alice/ }).click()
    await again.locator(".msg-user").filter({ hasText: "Hello from alice" }).waitFor()
    await expectNoSeriousAxeViolations(again)
    // On a phone the list folds behind its toggle: opened for the picture (the desktop shows it anyway).
    await again.setViewportSize(VIEWPORTS.phone)
    await again.getByRole("button", { name: /^Show \(\d+\)$/ }).click()
    await again.setViewportSize(VIEWPORTS.desktop)
    await screenshot(again, "users-conversations")

    // Deleted there (asked to confirm in the row first): gone from the server, and from the first browser's list.
    const row = again.locator(".conversation").filter({ hasText: "Hello from alice" })
    await row.getByRole("button", { name: "Delete" }).click()
    await row.getByText("Delete this chat for good?").waitFor()
    await expectNoSeriousAxeViolations(again)
    await screenshot(again, "users-delete-confirm")
    await row.getByRole("button", { name: "Delete" }).click()
    await waitForList(again, ["New chat", "Second chat of alice"])
    assert.strictEqual(new URL(again.url()).pathname, "/", "the deleted conversation was in view: the page moved to a new one")
    assert.deepStrictEqual((await apiChats(alice)).map((c) => c.title), ["Second chat of alice"])
    await alicePage.evaluate(() => window.dispatchEvent(new Event("focus")))
    await waitForList(alicePage, ["Second chat of alice"])
    await waitForList(bobPage, ["Hello from bob"])

    // Signing out forgets the tab's token and the list this browser kept.
    await bobPage.getByRole("button", { name: "Sign out" }).click()
    await bobPage.getByRole("heading", { level: 1, name: "Sign in to chat" }).waitFor()
    const kept = await bobPage.evaluate(() => ({ session: Object.keys(sessionStorage), local: Object.values(localStorage).join("\n") }))
    assert.deepStrictEqual(kept.session, [])
    assert.notInclude(kept.local, "Hello from bob")
    assert.strictEqual(await bobPage.locator(".account").count(), 0)
  }, 120_000)

  it("a long list comes a page at a time: \"Show older\" follows the server's cursor", async () => {
    const carol = await signWithSecret(SECRET, { sub: "carol", expiresIn: 3600 })
    for (let i = 1; i <= 33; i++) {
      const response = await fetch(`${server.url}/api/agent/chat`, {
        method: "POST",
        headers: { authorization: `Bearer ${carol}`, "content-type": "application/json" },
        body: JSON.stringify({ chatId: `carol-${i}`, messages: [{ id: `u${i}`, role: "user", content: `Carol's chat ${i}`, timestamp: i }] })
      })
      assert.strictEqual(response.status, 200, await response.text())
    }
    const page = await signedIn(carol, "carol")
    // The newest page (30) and the conversation in view.
    await page.getByRole("link", { name: /Carol's chat 33/ }).waitFor()
    assert.strictEqual((await listed(page)).length, 31)
    assert.strictEqual(await page.getByRole("link", { name: /Carol's chat 3\b/ }).count(), 0)
    await page.getByRole("button", { name: "Show older" }).click()
    await page.getByRole("link", { name: /Carol's chat 1\b/ }).waitFor()
    assert.strictEqual((await listed(page)).length, 34)
    assert.strictEqual(await page.getByRole("button", { name: "Show older" }).count(), 0, "the last page")
    // A refresh keeps as many as are shown.
    await page.evaluate(() => window.dispatchEvent(new Event("focus")))
    await page.waitForTimeout(500)
    assert.strictEqual((await listed(page)).length, 34)
  }, 60_000)

  it("no leak through the page: a remote image is a link and its server sees nothing; an allowed origin's loads", async () => {
    const index = await fetch(`${server.url}/`)
    const csp = index.headers.get("content-security-policy") ?? ""
    assert.include(csp, `img-src 'self' data: blob: ${images.url};`)
    assert.include(csp, "connect-src 'self';")
    assert.notInclude(csp, leak.url)
    assert.include(await index.text(), `<meta name="switchboard-image-origins" content="${images.url}">`)

    const page = alicePage
    const origins = new Set<string>()
    page.on("request", (request) => void origins.add(new URL(request.url()).origin))
    await page.getByRole("button", { name: "New chat" }).click()
    await page.getByRole("button", { name: "Start chat" }).click()
    await page.getByText("No messages yet.").waitFor()
    const composer = page.getByLabel("Message", { exact: true })
    await composer.fill("Show me the picture")
    await composer.press("Enter")
    const answer = page.locator(".msg-assistant").last()
    await answer.getByRole("link", { name: "secret chart" }).waitFor()
    await page.locator('.chat-status[data-status="idle"]').waitFor()

    for (const [name, path] of [["secret chart", "/leak?q=secret"], ["raw chart", "/raw?q=secret"], [`${leak.url}/bare?q=secret`, "/bare?q=secret"]] as const) {
      const link = answer.getByRole("link", { name, exact: true })
      assert.strictEqual(await link.getAttribute("href"), `${leak.url}${path}`, name)
      assert.strictEqual(await link.getAttribute("rel"), "noopener noreferrer", name)
      assert.strictEqual(await link.getAttribute("target"), "_blank", name)
    }
    assert.strictEqual(await page.locator(`img[src^="${leak.url}"]`).count(), 0, "no <img> of the other origin")
    const allowed = answer.locator(`img[alt="allowed chart"]`)
    assert.strictEqual(await allowed.getAttribute("src"), `${images.url}/pixel.png`)
    await page.waitForFunction((src) => {
      const image = document.querySelector<HTMLImageElement>(`img[src="${src}"]`)
      return image !== null && image.complete && image.naturalWidth === 1
    }, `${images.url}/pixel.png`)
    assert.deepStrictEqual(images.requests, ["/pixel.png"])

    // Again from the stored transcript, after a reload.
    await page.reload()
    await page.locator(".msg-assistant").last().getByRole("link", { name: "secret chart" }).waitFor()
    await page.waitForTimeout(500)
    assert.deepStrictEqual(leak.requests, [], "the other origin was never asked")
    assert.deepStrictEqual([...origins].filter((origin) => origin !== server.url && origin !== images.url), [])
    await expectNoSeriousAxeViolations(page)
    await screenshot(page, "users-image-fenced")
  }, 60_000)

  it("the operator's usage per user, and one user's per chat", async () => {
    const page = alicePage
    await page.goto(`${server.url}/operator/usage?groupBy=user`)
    await page.getByRole("heading", { level: 1, name: "Sign in as operator" }).waitFor()
    await page.getByLabel(/token/).fill(ADMIN_TOKEN)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { level: 1, name: "Usage" }).waitFor()
    assert.strictEqual(await page.getByLabel("Per", { exact: true }).inputValue(), "user")
    for (const user of ["alice", "bob"]) await page.getByRole("row", { name: new RegExp(`^${user}\\b`) }).waitFor()
    await page.locator(".account-who", { hasText: "Signed in as alice, operator" }).waitFor()
    await expectNoSeriousAxeViolations(page)
    await screenshot(page, "users-usage")

    await page.getByRole("link", { name: "alice", exact: true }).click()
    await page.getByRole("button", { name: "All users" }).waitFor()
    const search = new URL(page.url()).searchParams
    assert.strictEqual(search.get("groupBy"), "chat")
    assert.strictEqual(search.get("userId"), "alice")
    const aliceChats = page.getByRole("region", { name: /^Per chat of user alice/ })
    await aliceChats.waitFor()
    // Her chats by their ids (keyed `alice/<chatId>` by the server): not pages of this console's own user.
    assert.strictEqual(await aliceChats.getByRole("link").count(), 0)
    for (const key of await aliceChats.locator("tbody th").allTextContents()) assert.match(key, /^chat_[\w-]+$/)
    await expectNoSeriousAxeViolations(page)
    await screenshot(page, "users-usage-alice")
    await page.getByRole("button", { name: "All users" }).click()
    await page.getByRole("region", { name: /^Per chat, most tokens first/ }).waitFor()
    assert.isNull(new URL(page.url()).searchParams.get("userId"))
  }, 60_000)

  it("a CONSOLE_IMAGE_ORIGINS that is not a list of origins refuses to start, in one line", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "switchboard-users-settings-"))
    try {
      for (const value of ["https://images.example.com/path", "ftp://images.example.com", "images.example.com", "*"]) {
        const { code, output } = await Effect.runPromise(runServerProcess({ DATA_DIR: dataDir, CONSOLE_IMAGE_ORIGINS: value }))
        const lines = output.trimEnd().split("\n")
        assert.notStrictEqual(code, 0, value)
        assert.strictEqual(lines.length, 1, output)
        assert.match(lines[0]!, /^Refusing to start: invalid CONSOLE_IMAGE_ORIGINS ".+" \(expected .*http\(s\) origins.*\)$/, output)
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 60_000)
})
