/**
 * The demo builder's test bench: one headless Chromium per server process
 * (`playwright-core` driving the system's browser at `CHROMIUM_PATH`),
 * launched on the first demo and closed with the layer's scope. Each test
 * gets its own browser context, so concurrent demos share nothing but the
 * process.
 *
 * A test loads the document and watches it for a moment: it passes when the
 * page loads, raises no uncaught error, logs no console error, asks for
 * nothing from the network and renders something. The network is blocked
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
import { chromium } from "playwright-core"
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

export const make = (chromiumPath: string): Effect.Effect<HeadlessBrowser, never, Scope.Scope> =>
  Effect.gen(function*() {
    let launching: Promise<Browser> | undefined

    const launch = (): Promise<Browser> => {
      if (launching !== undefined) return launching
      const started = chromium.launch({
        executablePath: chromiumPath,
        headless: true,
        chromiumSandbox: process.getuid?.() !== 0,
        args: ["--disable-dev-shm-usage", "--disable-gpu", "--no-first-run"],
        timeout: 30_000
      })
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
        page.on("pageerror", (error) => problems.push(problemLine(`uncaught ${error.name}: ${error.message}`)))
        page.on("console", (message) => {
          // A blocked request also logs "Failed to load resource": reported once, as the request.
          if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
            problems.push(problemLine(`console error: ${message.text()}`))
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
        const rendered = await Promise.race([
          page.evaluate(RENDERED_SOMETHING).then((value) => value === true, () => true),
          new Promise<"unresponsive">((resolve) => setTimeout(() => resolve("unresponsive"), RESPONSIVE_MS).unref())
        ])
        if (rendered === "unresponsive") {
          problems.push(`the page stopped responding after it loaded (no answer within ${RESPONSIVE_MS} ms: a busy loop?)`)
        } else if (!rendered) problems.push("the page renders nothing visible (its body is empty)")
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
