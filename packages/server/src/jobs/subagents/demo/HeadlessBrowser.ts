/**
 * The demo builder's test bench: one headless Chromium per server process
 * (`playwright-core` driving the system's browser at `CHROMIUM_PATH`),
 * launched on the first demo and closed with the layer's scope. Each test
 * gets its own browser context, so concurrent demos share nothing but the
 * process.
 *
 * A test loads the document and watches it for a moment: it passes when the
 * page loads, raises no uncaught error, logs no console error, asks for
 * nothing from the network, renders something and keeps answering. A page
 * that passes that is then used: each of its controls (buttons, checkboxes,
 * radios, range and number inputs, selects; at most `MAX_CONTROLS`) is
 * operated once, and an error its handlers raise fails the test too. The network is blocked
 * for the page: every request but the document itself is aborted and
 * reported (a demo must be self-contained), WebSockets are closed, service
 * workers refused; `data:` and `blob:` URLs never reach the network anyway.
 *
 * Chromium's sandbox is used except as root (where Chromium refuses to start
 * with it): the page is model-written code, so run the server as a normal
 * user where that matters.
 */
import { Data, Effect } from "effect"
import type { Scope } from "effect"
import { access, constants } from "node:fs/promises"
import type { Browser } from "playwright-core"

/** No browser to test in: the demo cannot be verified, so it is not delivered. */
export class BrowserUnavailable extends Data.TaggedError("BrowserUnavailable")<{ readonly message: string }> {}

export interface PageCheck {
  /** Empty when the page passed. */
  readonly problems: ReadonlyArray<string>
}

export interface HeadlessBrowser {
  /** Fails only when there is no browser to test in; a failing page is `problems`. */
  check(html: string): Effect.Effect<PageCheck, BrowserUnavailable>
  /** Whether the configured executable exists, without launching it. */
  readonly available: Effect.Effect<void, BrowserUnavailable>
}

/** Where the document is served from (intercepted: nothing is resolved or sent). https: a secure context. */
export const DOCUMENT_URL = "https://demo.switchboard.invalid/index.html"
/** How long to load the document. */
export const LOAD_TIMEOUT_MS = 10_000
/** How long to keep watching after `load`: errors from timers and the first animation frames. */
export const SETTLE_MS = 400

/** How long a loaded page may take to answer one evaluation. */
export const RESPONSIVE_MS = 2_000

/** A problem line, single-line and bounded: problems go back to the model. */
const problemLine = (text: string) => {
  const line = text.replace(/\s+/g, " ").trim()
  return line.length > 300 ? `${line.slice(0, 299)}…` : line
}

// Evaluated in the page (a string: this package is compiled without DOM types).
const RENDERED_SOMETHING = `(() => {
  const body = document.body
  if (!body) return false
  if (body.innerText.trim() !== "") return true
  return body.querySelector("canvas, svg, img, video, input, button, select, textarea, [style*=background]") !== null
})()`

/** At most this many controls are exercised. */
export const MAX_CONTROLS = 20

// Clicks each button, checkbox and radio; moves each range and number input to its min, max and back; walks each
// select's first options. Links are not followed and forms not submitted: the demo is one page. Returns the names
// of the controls exercised. (A control whose handler navigates ends the evaluation: that is not an error.)
const EXERCISE_CONTROLS = `(async () => {
  document.addEventListener("submit", (event) => event.preventDefault(), true)
  const fire = (el, type) => el.dispatchEvent(new Event(type, { bubbles: true }))
  const names = []
  for (const el of Array.from(document.querySelectorAll("button, input, select")).slice(0, ${MAX_CONTROLS})) {
    if (el.disabled) continue
    const type = (el.getAttribute("type") || "").toLowerCase()
    if (el.tagName === "BUTTON" || ["button", "checkbox", "radio", "submit", "reset"].includes(type)) el.click()
    else if (type === "range" || type === "number") {
      for (const value of [el.min || "0", el.max || "100", el.defaultValue]) { el.value = value; fire(el, "input"); fire(el, "change") }
    } else if (el.tagName === "SELECT") {
      for (const option of Array.from(el.options).slice(0, 4)) { el.value = option.value; fire(el, "input"); fire(el, "change") }
    } else continue
    const named = el.getAttribute("aria-label") || el.getAttribute("name")
    const label = el.id ? "#" + el.id : named || (el.tagName === "BUTTON" && el.textContent) || el.tagName.toLowerCase()
    names.push(label.trim().slice(0, 40))
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  return names
})()`

/** The page's answer to an evaluation, or "unresponsive" past the limit (a busy loop never answers). */
const evaluateWithin = <T>(evaluation: Promise<T>, limitMs: number): Promise<T | "unresponsive"> =>
  Promise.race([
    evaluation,
    new Promise<"unresponsive">((resolve) => setTimeout(() => resolve("unresponsive"), limitMs).unref())
  ])

export const make = (chromiumPath: string): Effect.Effect<HeadlessBrowser, never, Scope.Scope> =>
  Effect.gen(function*() {
    let launching: Promise<Browser> | undefined

    const launch = (): Promise<Browser> => {
      if (launching !== undefined) return launching
      // playwright-core is imported on the first demo, not at start-up: its modules alone are ~30 MB resident.
      const started = import("playwright-core").then(({ chromium }) => chromium.launch({
        executablePath: chromiumPath,
        headless: true,
        chromiumSandbox: process.getuid?.() !== 0,
        args: ["--disable-dev-shm-usage", "--disable-gpu", "--no-first-run"],
        timeout: 30_000
      }))
      launching = started
      started.then(
        (browser) => browser.on("disconnected", () => {
          if (launching === started) launching = undefined
        }),
        () => {
          if (launching === started) launching = undefined
        }
      )
      return started
    }

    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        const current = launching
        launching = undefined
        if (current !== undefined) await current.then((b) => b.close(), () => undefined)
      })
    )

    const available = Effect.tryPromise({
      try: () => access(chromiumPath, constants.X_OK),
      catch: () =>
        new BrowserUnavailable({
          message: `no headless browser: nothing executable at ${chromiumPath} (install Chromium or set CHROMIUM_PATH)`
        })
    })

    const runCheck = async (browser: Browser, html: string): Promise<PageCheck> => {
      const context = await browser.newContext({ serviceWorkers: "block", viewport: { width: 1024, height: 768 } })
      try {
        const problems: Array<string> = []
        const blocked: Array<string> = []
        await context.route("**/*", (route) => {
          const url = route.request().url()
          if (url === DOCUMENT_URL) {
            return route.fulfill({ status: 200, contentType: "text/html; charset=utf-8", body: html })
          }
          blocked.push(url)
          return route.abort("blockedbyclient")
        })
        await context.routeWebSocket(/.*/, (socket) => {
          blocked.push(socket.url())
          return socket.close()
        })
        const page = await context.newPage()
        let phase: "load" | "controls" = "load"
        const during = () => phase === "controls" ? " (while the controls were exercised)" : ""
        page.on("pageerror", (error) => problems.push(problemLine(`uncaught ${error.name}: ${error.message}`) + during()))
        page.on("console", (message) => {
          // A blocked request also logs "Failed to load resource": reported once, as the request.
          if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
            problems.push(problemLine(`console error: ${message.text()}`) + during())
          }
        })
        page.on("dialog", (dialog) => void dialog.dismiss().catch(() => undefined))
        try {
          await page.goto(DOCUMENT_URL, { waitUntil: "load", timeout: LOAD_TIMEOUT_MS })
        } catch (error) {
          problems.push(problemLine(`the page did not load within ${LOAD_TIMEOUT_MS} ms: ${(error as Error).message.split("\n")[0]}`))
          return { problems }
        }
        await page.waitForTimeout(SETTLE_MS)
        // A page busy-looping after `load` never answers: that is a failure, not a wait.
        const rendered = await evaluateWithin(page.evaluate(RENDERED_SOMETHING).then((v) => v === true, () => true), RESPONSIVE_MS)
        if (rendered === "unresponsive") {
          problems.push(`the page stopped responding after it loaded (no answer within ${RESPONSIVE_MS} ms: a busy loop?)`)
        } else if (!rendered) problems.push("the page renders nothing visible (its body is empty)")
        // A page that loads cleanly is then used: its controls' handlers are code that must run too.
        if (problems.length === 0 && blocked.length === 0) {
          phase = "controls"
          const exercised = await evaluateWithin(
            page.evaluate(EXERCISE_CONTROLS).then((names) => names as Array<string>, () => [] as Array<string>),
            RESPONSIVE_MS + MAX_CONTROLS * 25
          )
          if (exercised === "unresponsive") {
            problems.push(`the page stopped responding while its controls were exercised (a busy loop in a handler?)`)
          } else {
            await page.waitForTimeout(SETTLE_MS / 2)
            if (problems.length > 0 && exercised.length > 0) problems.push(problemLine(`controls exercised: ${exercised.join(", ")}`))
          }
        }
        for (const url of [...new Set(blocked)]) {
          problems.push(problemLine(`network request blocked: ${url} (the demo must be self-contained: inline every script, style and image)`))
        }
        return { problems }
      } finally {
        await context.close().catch(() => undefined)
      }
    }

    const check = (html: string): Effect.Effect<PageCheck, BrowserUnavailable> =>
      available.pipe(
        Effect.andThen(Effect.tryPromise({
          try: () => launch(),
          catch: (error) =>
            new BrowserUnavailable({
              message: `the headless browser at ${chromiumPath} failed to start: ${problemLine(String((error as Error).message ?? error)).slice(0, 200)}`
            })
        })),
        Effect.flatMap((browser) =>
          Effect.tryPromise({
            try: () => runCheck(browser, html),
            // The browser went away mid-test (crashed, killed): a retry relaunches it.
            catch: (error) => new BrowserUnavailable({ message: `the headless browser failed during the test: ${problemLine(String(error))}` })
          })
        )
      )

    return { check, available }
  })
