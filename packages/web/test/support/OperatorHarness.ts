/**
 * What the operator's browser tests (Operator.test.ts, OperatorAgents.test.ts) stand on: the built
 * server (ConsoleHarness.ts) with ADMIN_TOKEN and CREDENTIAL_KEY, one browser and its first page
 * (clipboard allowed), and — when asked for — a stand-in OpenAI-compatible provider on a local port
 * for the planner (a profile created in the console points at it).
 *
 * Every response body a watched page received and the HTML of every page visited are kept, to
 * look in at the end for the secrets: the provider key typed into the profile form, and an MCP
 * server's header value given with a sub-agent kind. Each test file has its own, set up by
 * `useOperatorConsole()` at its top (it adds the `beforeAll` and `afterAll`):
 *
 * ```ts
 * const operator = useOperatorConsole({ provider: true })
 * const { signIn, visited, watch } = operator
 * let page: Page
 * beforeAll(() => void ({ page } = operator))
 * ```
 */
import { randomBytes } from "node:crypto"
import { createServer } from "node:http"
import type { Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { Browser, Page, Response } from "playwright-core"
import { afterAll, assert, beforeAll } from "vitest"
import { launchBrowser, newPage, startConsoleServer } from "./ConsoleHarness.ts"
import type { ConsoleServer } from "./ConsoleHarness.ts"

export const ADMIN_TOKEN = `admin-${randomBytes(8).toString("hex")}`
/** The provider key typed into the profile form: nowhere to be seen again. */
export const SECRET_KEY = `sk-operator-secret-${randomBytes(12).toString("hex")}`
/** An MCP server's header value given with a sub-agent kind: write-only, never on a page. */
export const HEADER_SECRET = `mcp-header-${randomBytes(8).toString("hex")}`

/** The stand-in provider: one tool call per request, the first tool offered, `{ step: n }`; the keys it was given. */
export interface StandInProvider {
  /** `http://127.0.0.1:<port>/v1`. */
  readonly url: string
  /** The `authorization` header of every request, in order. */
  readonly keys: Array<string>
  readonly close: () => void
}

const startProvider = () =>
  new Promise<StandInProvider>((ready) => {
    const keys: Array<string> = []
    let calls = 0
    const server: Server = createServer((req, res) => {
      let text = ""
      req.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")))
      req.on("end", () => {
        keys.push(req.headers.authorization ?? "")
        const body = JSON.parse(text) as { tools?: Array<{ function?: { name?: string } }> }
        const name = body.tools?.[0]?.function?.name ?? "click"
        const step = calls++
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
    server.listen(0, "127.0.0.1", () =>
      ready({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, keys, close: () => void server.close() })
    )
  })

export const heading = (p: Page, name: string | RegExp) => p.getByRole("heading", { level: 1, name })

export const signIn = async (p: Page) => {
  await heading(p, "Sign in as operator").waitFor()
  await p.getByLabel(/token/).fill(ADMIN_TOKEN)
  await p.getByRole("button", { name: "Sign in" }).click()
}

/** At 375 px the page does not scroll sideways: what is too wide scrolls in its own region. */
export const fitsAPhone = async (p: Page) => {
  const before = p.viewportSize()
  await p.setViewportSize({ width: 375, height: 800 })
  try {
    assert.isAtMost(await p.evaluate(() => document.documentElement.scrollWidth), 375, `${p.url()} is wider than a phone`)
  } finally {
    if (before !== null) await p.setViewportSize(before)
  }
}

export interface OperatorConsole {
  /** These three once the file's `beforeAll` ran. */
  readonly server: ConsoleServer
  readonly browser: Browser
  /** The first page, watched. */
  readonly page: Page
  /** Only with `{ provider: true }`. */
  readonly provider: StandInProvider
  /** Paths the watched pages requested. */
  readonly requested: ReadonlyArray<string>
  /** The HTML of every page visited. */
  readonly pages: ReadonlyArray<string>
  /** Every response body the watched pages received (text), so far. */
  readonly received: () => Promise<ReadonlyArray<string>>
  /** Keeps every response body and requested path of the page. */
  readonly watch: (p: Page) => void
  /** Keeps the page's HTML (to look for the key in) once it shows what `ready` waits for. */
  readonly visited: (p?: Page) => Promise<void>
  /** The provider key in no page visited nor any body received; the MCP header's value in no body. */
  readonly expectNoSecretShown: () => Promise<void>
  readonly signIn: typeof signIn
}

/** The server, the browser and its first page (and the stand-in provider if asked for), for the file that calls it. */
export const useOperatorConsole = (options: { readonly provider?: boolean } = {}): OperatorConsole => {
  let server: ConsoleServer | undefined
  let browser: Browser | undefined
  let page: Page | undefined
  let provider: StandInProvider | undefined
  const bodies: Array<Promise<string>> = []
  const pages: Array<string> = []
  const requested: Array<string> = []
  const started = <A>(value: A | undefined, what: string): A => {
    if (value === undefined) throw new Error(`the operator console's ${what} is not started`)
    return value
  }

  const watch = (p: Page) => {
    p.on("response", (response: Response) => {
      bodies.push(response.body().then((b) => b.toString("utf8"), () => ""))
    })
    p.on("request", (request) => void requested.push(new URL(request.url()).pathname))
  }

  beforeAll(async () => {
    ;[server, browser, provider] = await Promise.all([
      startConsoleServer({ ADMIN_TOKEN, CREDENTIAL_KEY: randomBytes(32).toString("base64") }),
      launchBrowser(),
      options.provider === true ? startProvider() : undefined
    ])
    page = await newPage(browser)
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url })
    watch(page)
  }, 180_000)

  afterAll(async () => {
    await browser?.close()
    await server?.close()
    provider?.close()
  })

  return {
    get server() {
      return started(server, "server")
    },
    get browser() {
      return started(browser, "browser")
    },
    get page() {
      return started(page, "page")
    },
    get provider() {
      return started(provider, "stand-in provider")
    },
    requested,
    pages,
    received: () => Promise.all(bodies),
    watch,
    visited: async (p = started(page, "page")) => void pages.push(await p.content()),
    expectNoSecretShown: async () => {
      for (const html of pages) assert.notInclude(html, SECRET_KEY)
      for (const body of await Promise.all(bodies)) assert.notInclude(body, SECRET_KEY)
      for (const body of await Promise.all(bodies)) assert.notInclude(body, HEADER_SECRET)
    },
    signIn
  }
}
