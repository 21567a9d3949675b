/**
 * The console case of `npm run bench`: the time to the chat's first paint
 * in headless Chromium (Debian's, as the tests drive it), against the
 * benchmark's own server — the built console, served as `npm start` serves
 * it. Each load is a fresh browser context: nothing cached, no storage, as a
 * first visit. Measured by the page itself (`performance`'s paint entries),
 * so the browser's start-up is not in it; the first-load JavaScript size is
 * the build's figure (`firstLoadOf`), printed beside it.
 */
import { chromium } from "playwright-core"

export interface ConsoleLoad {
  /** `first-contentful-paint`, ms from navigation start. */
  readonly firstPaintMs: number
  /** The chat's composer is in the page, ms from navigation start. */
  readonly chatReadyMs: number
}

/** Loads `url` `loads` times, each in a fresh context, after one warm-up load (the browser's own caches of its code). */
export const consoleLoads = async (url: string, loads: number): Promise<ReadonlyArray<ConsoleLoad>> => {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    headless: true,
    chromiumSandbox: process.getuid?.() !== 0,
    args: ["--disable-dev-shm-usage", "--disable-gpu", "--no-first-run"],
    timeout: 30_000
  })
  try {
    const results: Array<ConsoleLoad> = []
    for (let i = 0; i <= loads; i++) {
      const context = await browser.newContext({ viewport: { width: 1440, height: 900 } })
      try {
        const page = await context.newPage()
        await page.goto(url, { waitUntil: "load" })
        await page.waitForFunction(() => performance.getEntriesByName("first-contentful-paint").length > 0, undefined, { timeout: 30_000 })
        // The chat is usable when its composer is there.
        await page.waitForSelector("textarea", { timeout: 30_000 })
        const load = await page.evaluate(() => ({
          firstPaintMs: performance.getEntriesByName("first-contentful-paint")[0]!.startTime,
          chatReadyMs: performance.now()
        }))
        if (i > 0) results.push(load)
      } finally {
        await context.close()
      }
    }
    return results
  } finally {
    await browser.close()
  }
}
