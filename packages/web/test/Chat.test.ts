/**
 * The chat page in Chromium against the built server (scripted provider, test/fixtures/chat-script.json):
 * a file picked for the agent context, uploaded by `transcribe_video` when the model calls it, its card
 * done, the answer streamed in pieces and rendered as sanitized markdown; a streaming answer stopped
 * midway (the partial text kept, marked stopped, on the server too); a reload mid-answer follows the running turn; a reload with the local history
 * gone re-synced from the server's transcript; a new chat and back, a busy server's 503 said as "Busy —
 * retry in 3 s" then retried; axe-core and screenshots at both widths, light and dark.
 */
import type { Browser, Page } from "playwright-core"
import { join, resolve } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import {
  expectNoSeriousAxeViolations,
  launchBrowser,
  newPage,
  screenshot,
  startConsoleServer
} from "./support/ConsoleHarness.ts"
import type { ConsoleServer } from "./support/ConsoleHarness.ts"

const SCRIPT = join(import.meta.dirname, "fixtures", "chat-script.json")
const CLIP = resolve(import.meta.dirname, "../../../examples/clip.webm")

let server: ConsoleServer
let browser: Browser
let page: Page
let chatId = ""

beforeAll(async () => {
  ;[server, browser] = await Promise.all([startConsoleServer({ LLM_SCRIPT: SCRIPT }), launchBrowser()])
  page = await newPage(browser)
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
})

const lastAssistant = () => page.locator(".msg-assistant").last()
const status = () => page.locator(".chat-status")

/**
 * Records, on every change of the page, the chat's status and the length of the last assistant
 * message's text: how an answer arrived (in pieces, or at once).
 */
const recordStreaming = () =>
  page.evaluate(() => {
    const seen: Array<{ status: string; length: number; message: number }> = []
    ;(window as unknown as { seen: typeof seen }).seen = seen
    new MutationObserver(() => {
      const messages = document.querySelectorAll(".msg-assistant .markdown")
      seen.push({
        status: document.querySelector(".chat-status")?.getAttribute("data-status") ?? "",
        length: messages[messages.length - 1]?.textContent?.length ?? 0,
        message: messages.length
      })
    }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true })
  })

const recorded = () => page.evaluate(() => (window as unknown as { seen: Array<{ status: string; length: number; message: number }> }).seen)

const transcript = async (id: string) => {
  const response = await fetch(`${server.url}/api/chats/${id}/messages`)
  assert.strictEqual(response.status, 200)
  return ((await response.json()) as { messages: Array<{ role: string; content: string; metadata?: Record<string, unknown> }> }).messages
}

describe("the chat page", () => {
  it("transcribes a picked file through the browser's upload, streams the answer, stops a turn, re-syncs after a reload", async () => {
    await page.goto(`${server.url}/`)
    await page.getByRole("heading", { level: 1, name: "Chat" }).waitFor()
    await page.getByText("Connected: agent media-editor.").waitFor()
    await page.getByText("No messages yet.").waitFor()
    await expectNoSeriousAxeViolations(page)
    await screenshot(page, "chat-empty")

    // The context: a file picked from disk.
    await page.locator("summary", { hasText: "Project context" }).click()
    await page.getByLabel("Add a media file").setInputFiles(CLIP)
    await page.getByText(/File clip\.webm, 1\.\d KB/).waitFor()
    const context = await page.evaluate(() => JSON.parse(localStorage.getItem("switchboard:agent-store") ?? "null"))
    assert.deepInclude(context.state.context.mediaAssets[0], { id: "clip", name: "clip.webm", kind: "video", uri: "picked-file:clip.webm" })
    await expectNoSeriousAxeViolations(page)
    await screenshot(page, "chat-context")
    await page.locator("summary", { hasText: "Project context" }).click()

    // The turn: Enter sends; the tool uploads the file; the answer streams.
    await recordStreaming()
    const upload = page.waitForRequest((request) => new URL(request.url()).pathname === "/api/media/transcriptions")
    const composer = page.getByLabel("Message", { exact: true })
    await composer.fill("Please transcribe my clip")
    await composer.press("Enter")
    const request = await upload
    assert.strictEqual(request.method(), "POST")
    assert.include(request.headers()["content-type"] ?? "", "multipart/form-data")
    await page.getByRole("group", { name: "Tool transcribe_video: Done" }).waitFor()
    await page.getByRole("group", { name: "Tool transcribe_video: Done" }).getByText(/Transcript of clip\.webm: \d+ bytes of speech\./).waitFor()
    await lastAssistant().getByRole("link", { name: "the docs" }).waitFor({ timeout: 20_000 })
    await page.locator('.chat-status[data-status="idle"]').waitFor()

    const seen = await recorded()
    assert.isTrue(seen.some((s) => s.status === "processing"), "the status showed the tool running")
    assert.isTrue(seen.some((s) => s.status === "responding"), "the status showed the answer streaming")
    // The final answer's text (the last assistant message the turn showed) while it streamed.
    const last = Math.max(...seen.map((s) => s.message))
    const lengths = [...new Set(seen.filter((s) => s.status === "responding" && s.message === last).map((s) => s.length))]
    assert.isAtLeast(lengths.length, 5, `the answer grew in pieces: ${lengths.join(", ")}`)
    assert.deepStrictEqual(lengths, [...lengths].sort((a, b) => a - b), "it only grew")

    // Markdown, sanitized: bold, a code block, a link that opens apart.
    const answer = lastAssistant()
    assert.strictEqual(await answer.locator("strong").first().textContent(), "transcription")
    assert.include(await answer.locator("pre code").textContent(), "ffmpeg -i clip.webm")
    const link = answer.getByRole("link", { name: "the docs" })
    assert.strictEqual(await link.getAttribute("rel"), "noopener noreferrer")
    assert.strictEqual(await link.getAttribute("target"), "_blank")
    assert.include(await answer.locator("blockquote").textContent(), "Transcript of clip.webm")

    // The address is the conversation's.
    chatId = new URL(page.url()).pathname.replace(/^\/chats\//, "")
    assert.match(chatId, /^chat_[\w-]+$/)
    await expectNoSeriousAxeViolations(page)
    await screenshot(page, "chat-transcribed")

    // Stop mid-stream: what arrived stays, marked stopped.
    await composer.fill("Tell me a long story")
    await composer.press("Enter")
    await lastAssistant().getByText(/^Once upon a time there/).waitFor()
    await page.locator('.chat-status[data-status="responding"]').waitFor()
    await page.getByRole("button", { name: "Stop" }).click()
    await lastAssistant().getByText("Stopped").waitFor()
    await page.locator('.chat-status[data-status="idle"]').waitFor()
    const partial = (await lastAssistant().locator(".markdown").textContent()) ?? ""
    assert.match(partial, /^Once upon a time/)
    assert.notInclude(partial, "by the river", "the answer was cut short")
    const stored = (await transcript(chatId)).at(-1)!
    assert.strictEqual(stored.role, "assistant")
    assert.strictEqual(stored.metadata?.["stopped"], true)
    assert.isTrue(partial.startsWith(stored.content.trim().slice(0, 20)))
    await page.getByRole("button", { name: "Send" }).waitFor()

    // Reload with the browser's copy gone: the conversation comes back from the server.
    await page.evaluate(() => localStorage.removeItem("switchboard:chat-store"))
    await page.reload()
    await page.getByRole("group", { name: "Tool transcribe_video: Done" }).waitFor()
    assert.strictEqual(new URL(page.url()).pathname, `/chats/${chatId}`)
    await page.locator(".msg-user").filter({ hasText: "Please transcribe my clip" }).waitFor()
    await lastAssistant().getByText("Stopped").waitFor()
    assert.include(await page.locator(".msg-assistant").nth(1).textContent(), "Here is the transcription")
    await page.getByRole("link", { name: /Please transcribe my clip/ }).waitFor()
    // The picked file stays with the page that picked it.
    await page.locator("summary", { hasText: "Project context" }).click()
    await page.getByText(/must be picked again/).waitFor()
    await expectNoSeriousAxeViolations(page)
    await screenshot(page, "chat-resynced")
  }, 120_000)

  it("a new chat with a chosen agent, the old one reopened from the list", async () => {
    await page.getByRole("button", { name: "New chat" }).click()
    const agent = page.getByLabel("Agent", { exact: true })
    await agent.fill("no-such-agent")
    await page.getByRole("button", { name: "Start chat" }).click()
    await page.getByRole("alert").filter({ hasText: 'No agent named "no-such-agent"' }).waitFor()
    await agent.fill("media-editor")
    await page.getByRole("button", { name: "Start chat" }).click()
    await page.getByText("No messages yet.").waitFor()
    const fresh = new URL(page.url()).pathname.replace(/^\/chats\//, "")
    assert.notStrictEqual(fresh, chatId)

    const composer = page.getByLabel("Message", { exact: true })
    await composer.fill("Hello there")
    await composer.press("Enter")
    await lastAssistant().getByText("You said: Hello there").waitFor()
    await page.getByRole("link", { name: /Hello there/ }).waitFor()

    // A busy server (503 overloaded, refused before any stream): said as busy with its wait, not as a
    // failure of the model; the message stays, and Retry sends the turn again.
    await page.route("**/api/agent/chat", (route) =>
      route.fulfill({
        status: 503,
        headers: { "content-type": "application/json", "retry-after": "3" },
        body: JSON.stringify({ error: "Too many turns in flight on this replica", code: "overloaded", retryAfter: 3 })
      }))
    await composer.fill("Are you busy?")
    await composer.press("Enter")
    const busy = page.getByRole("alert").filter({ hasText: "Busy — retry in 3 s" })
    await busy.waitFor()
    assert.notInclude(await busy.textContent(), "provider error")
    assert.strictEqual(await status().textContent(), "Busy: the turn was not started.")
    await expectNoSeriousAxeViolations(page)
    await screenshot(page, "chat-busy")
    await page.unroute("**/api/agent/chat")
    await busy.getByRole("button", { name: "Retry" }).click()
    await lastAssistant().getByText("You said: Are you busy?").waitFor()
    assert.strictEqual(await busy.count(), 0)

    await page.getByRole("link", { name: /Please transcribe my clip/ }).click()
    await page.getByRole("group", { name: "Tool transcribe_video: Done" }).waitFor()
    assert.strictEqual(new URL(page.url()).pathname, `/chats/${chatId}`)
    assert.strictEqual(await page.getByRole("link", { name: /Please transcribe my clip/ }).getAttribute("aria-current"), "page")
    assert.strictEqual(await page.locator(".msg-user").filter({ hasText: "Hello there" }).count(), 0)
  }, 60_000)

  it("a reload in the middle of an answer follows the running turn to its end, stored once", async () => {
    const composer = page.getByLabel("Message", { exact: true })
    await composer.fill("Tell me a long story again")
    await composer.press("Enter")
    await lastAssistant().getByText(/^Once upon a time there/).waitFor()
    await page.reload()
    // The turn goes on on the server; the page follows it from its first chunk and keeps growing.
    await page.locator('.chat-status[data-status="responding"]').waitFor()
    await recordStreaming()
    // No layout jump while the text grows: the conversation scrolls inside its region, the composer stays put.
    const composerTops: Array<number> = []
    for (let i = 0; i < 4; i++) {
      composerTops.push((await composer.boundingBox())!.y)
      await page.waitForTimeout(400)
    }
    assert.strictEqual(new Set(composerTops).size, 1, `the composer moved: ${composerTops.join(", ")}`)
    await lastAssistant().getByText(/by the river\.$/).waitFor({ timeout: 60_000 })
    await page.locator('.chat-status[data-status="idle"]').waitFor()
    const lengths = (await recorded()).map((r) => r.length)
    assert.isAbove(new Set(lengths).size, 3, "the followed answer grew in pieces")
    const stories = (await transcript(chatId)).filter((m) => m.role === "assistant" && m.content.startsWith("Once upon a time"))
    assert.strictEqual(stories.filter((m) => m.content.trim().endsWith("by the river.")).length, 1, "the answer stored once")
    assert.strictEqual(await page.locator(".msg-assistant", { hasText: "by the river." }).count(), 1, "and shown once")
  }, 90_000)

  it("in dark mode: no serious axe violation, screenshots at both widths", async () => {
    const dark = await newPage(browser, { colorScheme: "dark" })
    try {
      await dark.goto(`${server.url}/chats/${chatId}`)
      await dark.getByRole("group", { name: "Tool transcribe_video: Done" }).waitFor()
      await expectNoSeriousAxeViolations(dark)
      await screenshot(dark, "chat-dark")
    } finally {
      await dark.context().close()
    }
  }, 60_000)
})
