/**
 * What the console's browser tests stand on: the production build (`dist/`,
 * `dist/web`: built by the suite's global set-up, scripts/vitest-build.ts)
 * run as a process on its own database with the scripted provider (no
 * network), Debian's Chromium driven by `playwright-core`, screenshots at a
 * phone's and a desktop's width, and axe-core's check.
 *
 * Promise-based, for `beforeAll`/`afterAll` and playwright's own style:
 *
 * ```ts
 * let server: ConsoleServer, browser: Browser, page: Page
 * beforeAll(async () => {
 *   server = await startConsoleServer({ CHAT_TOKEN: "…" })
 *   browser = await launchBrowser()
 *   page = await newPage(browser)
 * }, 180_000)
 * afterAll(async () => { await browser?.close(); await server?.close() })
 * ```
 *
 * One browser per test file, pages reused: each launch costs a second or two.
 */
import { Effect, Exit, Scope } from "effect"
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { chromium } from "playwright-core"
import type { Browser, Page } from "playwright-core"
import { freePort, makeTestDatabase, startServerProcess } from "@switchboard/server/testing"

const ROOT = resolve(import.meta.dirname, "../../../..")

/** Where screenshots go (gitignored): `test-artifacts/screenshots/<name>-<width>.png`. */
export const SCREENSHOTS_DIR = join(ROOT, "test-artifacts", "screenshots")

/** The widths every page is checked at. */
export const VIEWPORTS = {
  phone: { width: 375, height: 800 },
  desktop: { width: 1440, height: 900 }
} as const

/** The scripted provider's demo script (examples/scripted-demo.json); LLM_SCRIPT overrides it. */
export const DEMO_SCRIPT = join(ROOT, "examples", "scripted-demo.json")

export interface ConsoleServer {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly url: string
  /** Everything the process wrote so far. */
  readonly output: () => string
  /** Stops the process and drops its database. */
  readonly close: () => Promise<void>
}

/**
 * The built server as a process, ready (`/readyz` 200) when this resolves: the scripted provider
 * (`examples/scripted-demo.json`), a fresh database (a scratch one on `DATABASE_URL`, else an
 * embedded one in a temporary `DATA_DIR`), 127.0.0.1 on a free port. `env` adds to or overrides
 * that (`CHAT_TOKEN`, `ADMIN_TOKEN`, `LLM_SCRIPT`, …).
 */
export const startConsoleServer = async (env: Record<string, string> = {}): Promise<ConsoleServer> => {
  const scope = await Effect.runPromise(Scope.make())
  const close = () => Effect.runPromise(Scope.close(scope, Exit.void))
  try {
    const server = await Effect.runPromise(Effect.gen(function*() {
      const database = process.env.DATABASE_URL
        ? { DATABASE_URL: (yield* makeTestDatabase).url! }
        : {
          DATA_DIR: yield* Effect.acquireRelease(
            Effect.sync(() => mkdtempSync(join(tmpdir(), "switchboard-console-"))),
            (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
          )
        }
      return yield* startServerProcess({
        ...database,
        HOST: "127.0.0.1",
        PORT: String(yield* freePort),
        LLM_PROVIDER: "scripted",
        LLM_MODEL: "scripted-demo",
        LLM_API_KEY: "unused",
        LLM_SCRIPT: DEMO_SCRIPT,
        LOG_LEVEL: "info",
        ...env
      })
    }).pipe(Scope.provide(scope)))
    await waitUntilReady(server.url)
    return { url: server.url, output: server.output, close }
  } catch (error) {
    await close()
    throw error
  }
}

const waitUntilReady = async (url: string, timeoutMs = 120_000) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const status = await fetch(`${url}/readyz`).then((r) => r.status, () => 0)
    if (status === 200) return
    if (Date.now() > deadline) throw new Error(`the server at ${url} was not ready within ${timeoutMs} ms (last /readyz: ${status})`)
    await new Promise((done) => setTimeout(done, 200))
  }
}

/** Chromium (`CHROMIUM_PATH`, default Debian's `/usr/bin/chromium`), headless, as the demo sub-agent launches it. */
export const launchBrowser = (): Promise<Browser> =>
  chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    headless: true,
    chromiumSandbox: process.getuid?.() !== 0,
    args: ["--disable-dev-shm-usage", "--disable-gpu", "--no-first-run"],
    timeout: 30_000
  })

/** A page in a fresh context (its own sessionStorage and localStorage), at the desktop width. */
export const newPage = async (browser: Browser, options: { readonly colorScheme?: "light" | "dark" } = {}): Promise<Page> => {
  const context = await browser.newContext({ viewport: VIEWPORTS.desktop, colorScheme: options.colorScheme ?? "light" })
  return context.newPage()
}

/**
 * The page at both widths, `test-artifacts/screenshots/<name>-375.png` and `<name>-1440.png`
 * (the whole page); the viewport is put back as it was. Returns the two paths.
 */
export const screenshot = async (page: Page, name: string): Promise<ReadonlyArray<string>> => {
  mkdirSync(SCREENSHOTS_DIR, { recursive: true })
  const before = page.viewportSize()
  const paths: Array<string> = []
  try {
    for (const viewport of [VIEWPORTS.phone, VIEWPORTS.desktop]) {
      await page.setViewportSize(viewport)
      const path = join(SCREENSHOTS_DIR, `${name}-${viewport.width}.png`)
      // A full-page capture under the whole suite's load can stall once in Chromium (seen in CI: 30 s
      // "taking page screenshot" on an idle page): the artifact is taken again, once, rather than lost.
      await page.screenshot({ path, fullPage: true, animations: "disabled" }).catch((error: unknown) =>
        error instanceof Error && error.name === "TimeoutError"
          ? page.screenshot({ path, fullPage: true, animations: "disabled" })
          : Promise.reject(error)
      )
      paths.push(path)
    }
  } finally {
    if (before !== null) await page.setViewportSize(before)
  }
  return paths
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

export interface AxeViolation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly nodes: ReadonlyArray<string>
}

/**
 * Runs axe-core on the page (WCAG 2.x A and AA rules) and fails, naming each, on any serious or
 * critical violation. axe is evaluated by the driver, not added as a `<script>`: the console's
 * Content-Security-Policy would block that.
 */
export const expectNoSeriousAxeViolations = async (page: Page): Promise<void> => {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axeSource)
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document, options: object) => Promise<{ violations: Array<any> }> } }).axe
    const result = await axe.run(document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"] },
      resultTypes: ["violations"]
    })
    return result.violations.map((v): AxeViolation => ({
      id: v.id,
      impact: v.impact ?? null,
      help: v.help,
      nodes: v.nodes.map((node: { target: Array<string> }) => node.target.join(" "))
    }))
  })
  const serious = violations.filter((v) => v.impact === "serious" || v.impact === "critical")
  if (serious.length > 0) {
    const list = serious.map((v) => `- ${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 5).join(", ")}`).join("\n")
    throw new Error(`axe-core: ${serious.length} serious or critical violation(s) on ${page.url()}:\n${list}`)
  }
}
