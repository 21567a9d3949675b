/**
 * The client as a library outside the workspace: built (JavaScript and declarations) and packed with
 * `npm pack`, with the domain it depends on (scripts/build.ts `packLibraries`); both tarballs installed
 * into a blank Vite + React app in a temporary directory — unpacked into its `node_modules`, every other
 * package the tarballs declare (and React, Vite, the React types) linked from the workspace's, so no
 * network — the app type-checked against the packed declarations, built with Vite, and the built app
 * opened in Chromium, served by a fake of the chat route: its chat shows the user's message and the
 * answer streamed in.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, extname, join, resolve } from "node:path"
import { chromium } from "playwright-core"
import { packLibraries } from "../../../scripts/build.ts"
import { startFakeServer } from "./support/FakeServer.ts"
import type { RecordedRequest, Reply } from "./support/FakeServer.ts"
import { streamedReply, turnChunks } from "./support/FakeStream.ts"

const ROOT = resolve(import.meta.dirname, "../../..")
const ANSWER = ["Hello from ", "the packed ", "client."]

/** The app, as `npm create vite` with React would start it, its one component a chat over the client. */
const APP: Record<string, string> = {
  "package.json": JSON.stringify({
    name: "packed-client-app",
    private: true,
    type: "module",
    dependencies: {
      "@switchboard/client": "file:../pack/switchboard-client-0.1.0.tgz",
      "@switchboard/domain": "file:../pack/switchboard-domain-0.1.0.tgz",
      react: "^19.0.0",
      "react-dom": "^19.0.0"
    },
    devDependencies: { "@types/react": "^19.0.0", "@types/react-dom": "^19.0.0", vite: "^8.0.0" }
  }),
  "tsconfig.json": JSON.stringify({
    compilerOptions: {
      target: "ES2023",
      lib: ["ES2023", "DOM", "DOM.Iterable"],
      module: "ESNext",
      moduleResolution: "bundler",
      jsx: "react-jsx",
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: []
    },
    include: ["src"]
  }),
  "index.html": `<!doctype html>
<html><head><meta charset="utf-8"><title>Chat</title></head>
<body><div id="root"></div><script type="module" src="/src/main.tsx"></script></body></html>`,
  "src/main.tsx": `import { makeTransientChatStore, run } from "@switchboard/client"
import type { ChatMessage } from "@switchboard/domain"
import { useSyncExternalStore } from "react"
import { createRoot } from "react-dom/client"

const chat = makeTransientChatStore()

function Chat() {
  const messages: ReadonlyArray<ChatMessage> = useSyncExternalStore(chat.subscribe, () => chat.getState().messages)
  return <ol>{messages.map((m) => <li key={m.id} data-role={m.role}>{m.content}</li>)}</ol>
}

createRoot(document.getElementById("root")!).render(<Chat />)
const question = chat.getState().addMessage({ role: "user", content: "Who is there?" })
void run([question], null, { serverUrl: location.origin, tools: [] }).then(
  (added) => added.forEach((message) => chat.getState().addMessage(message)),
  (error: unknown) => chat.getState().addMessage({ role: "assistant", content: "failed: " + String(error) })
)
`
}

/** "Installs" a tarball as npm would: unpacked into `node_modules/<name>`; returns its manifest. */
const unpack = (app: string, tarball: string): { name: string; dependencies?: Record<string, string> } => {
  const staging = mkdtempSync(join(app, ".unpack-"))
  execFileSync("tar", ["-xzf", tarball, "-C", staging, "--strip-components=1"])
  const manifest = JSON.parse(readFileSync(join(staging, "package.json"), "utf8")) as { name: string }
  mkdirSync(dirname(join(app, "node_modules", manifest.name)), { recursive: true })
  renameSync(staging, join(app, "node_modules", manifest.name))
  return manifest
}

/** Links a package of the workspace's `node_modules` into the app's (what an offline install would copy). */
const link = (app: string, name: string) => {
  const target = join(app, "node_modules", name)
  if (existsSync(target)) return
  mkdirSync(dirname(target), { recursive: true })
  symlinkSync(join(ROOT, "node_modules", name), target, "dir")
}

const CONTENT_TYPES: Record<string, string> = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css" }

/** The built app's files, and the chat route streaming `ANSWER`. */
const serveApp = (dist: string) => (request: RecordedRequest): Reply => {
  if (request.method === "POST" && request.path === "/api/agent/chat") {
    return streamedReply(turnChunks({ messageId: "srv_1", deltas: ANSWER }))
  }
  const file = join(dist, request.path === "/" ? "index.html" : request.path)
  if (!file.startsWith(dist) || !existsSync(file)) return { status: 404, body: "" }
  return { body: readFileSync(file), headers: { "content-type": CONTENT_TYPES[extname(file)] ?? "application/octet-stream" } }
}

describe("the packed client", () => {
  it.effect("installs into a blank Vite + React app, which type-checks, builds and renders a chat", () =>
    Effect.gen(function*() {
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "switchboard-pack-"))),
        (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
      )
      const tarballs = packLibraries(join(dir, "pack"))
      assert.deepStrictEqual(tarballs.map((path) => path.slice(dir.length)), [
        "/pack/switchboard-domain-0.1.0.tgz",
        "/pack/switchboard-client-0.1.0.tgz"
      ])

      const app = join(dir, "app")
      for (const [path, text] of Object.entries(APP)) {
        mkdirSync(dirname(join(app, path)), { recursive: true })
        writeFileSync(join(app, path), text)
      }
      const manifests = tarballs.map((tarball) => unpack(app, tarball))
      // What the tarballs declare, from the workspace: a dependency the client forgot would be missing here.
      const declared = manifests.flatMap((m) => Object.keys(m.dependencies ?? {})).filter((n) => !n.startsWith("@switchboard/"))
      assert.deepStrictEqual([...new Set(declared)].sort(), ["effect", "zustand"])
      for (const name of [...declared, "react", "react-dom", "vite", "@types/react", "@types/react-dom"]) link(app, name)
      // Only the packed form is there: JavaScript and declarations, no TypeScript source.
      const client = join(app, "node_modules", "@switchboard", "client")
      assert.isTrue(existsSync(join(client, "src", "index.js")) && existsSync(join(client, "src", "index.d.ts")))
      assert.isFalse(existsSync(join(client, "src", "index.ts")))

      execFileSync(join(ROOT, "node_modules", ".bin", "tsc"), ["-p", app], { stdio: ["ignore", "pipe", "pipe"] })
      execFileSync(process.execPath, [join(app, "node_modules", "vite", "bin", "vite.js"), "build", "--logLevel", "error"], {
        cwd: app,
        env: { ...process.env, NODE_ENV: "production" },
        stdio: ["ignore", "pipe", "pipe"]
      })

      const server = yield* startFakeServer(serveApp(join(app, "dist")))
      const browser = yield* Effect.acquireRelease(
        Effect.promise(() =>
          chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", chromiumSandbox: process.getuid?.() !== 0 })
        ),
        (browser) => Effect.promise(() => browser.close())
      )
      const chat = yield* Effect.promise(async () => {
        const page = await browser.newPage()
        await page.goto(server.url)
        await page.locator("li[data-role=assistant]").waitFor({ timeout: 15_000 })
        return page.locator("li").evaluateAll((items) => items.map((li) => [li.getAttribute("data-role"), li.textContent]))
      })
      assert.deepStrictEqual(chat, [["user", "Who is there?"], ["assistant", ANSWER.join("")]])
      const asked = server.requests.find((r) => r.path === "/api/agent/chat")
      assert.strictEqual(JSON.parse(asked!.body.toString()).messages[0].content, "Who is there?")
    }).pipe(Effect.scoped), 60_000)
})
