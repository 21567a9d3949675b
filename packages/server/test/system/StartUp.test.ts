/**
 * Requests that reach the port while the server is still starting (the
 * embedded database takes seconds) are answered at once: `/healthz` 200,
 * `/readyz` 503, anything else 503 `not_ready` — never accepted and left
 * hanging. A real process (the production build, `node dist/server/src/main.js`), probed in a
 * loop from before it listens until after it is ready.
 *
 * The process always runs on the embedded database (a fresh DATA_DIR, even
 * when the suite runs on PostgreSQL): its start is the long window this is
 * about, and the shared PostgreSQL's own database must not be migrated.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { BUILT_SERVER_MAIN } from "../../../../scripts/build.ts"

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address()
      probe.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

type Probe = { readonly path: string; readonly init?: RequestInit }
const PROBES: ReadonlyArray<Probe> = [
  { path: "/healthz" },
  { path: "/readyz" },
  { path: "/api/chats/some-chat/messages" },
  {
    path: "/api/agent/chat",
    init: {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages: [{ id: "u1", role: "user", content: "hi", timestamp: 1 }] })
    }
  }
]

/**
 * `undefined` when the connection was refused (nothing listens yet); a thrown error when it hung or broke.
 * The limit is generous: while PGlite compiles and initialises, the child's event loop is busy for seconds
 * (much longer on a loaded machine), which delays answers; the defect was answers that never came.
 */
const probe = async (base: string, { init, path }: Probe) => {
  try {
    const response = await fetch(base + path, { ...init, signal: AbortSignal.timeout(60_000) })
    const body = await response.json() as { code?: string }
    return { path, status: response.status, code: body.code }
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause
    if (cause?.code === "ECONNREFUSED") return undefined
    throw new Error(`${path}: connected but not answered (${String(error)})`)
  }
}

describe("start-up", () => {
  it.live("every request that connects while the server starts is answered", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(freePort)
      const dataDir = mkdtempSync(join(tmpdir(), "switchboard-startup-"))
      const env: Record<string, string> = { ...process.env as Record<string, string>, PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dataDir, LOG_LEVEL: "warn" }
      // No provider configured (the chat route then answers 502), no token, embedded database.
      for (const key of Object.keys(env)) if (/^(DATABASE_URL|LLM_|CHAT_|CORS_)/.test(key)) delete env[key]
      const child = yield* Effect.acquireRelease(
        Effect.sync(() => spawn(process.execPath, [BUILT_SERVER_MAIN], { env, stdio: ["ignore", "ignore", "inherit"] })),
        (child) =>
          Effect.promise(() =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null) return resolve()
              // A process busy starting its database may take a while to act on SIGTERM.
              const kill = setTimeout(() => child.kill("SIGKILL"), 5_000)
              child.once("exit", () => {
                clearTimeout(kill)
                resolve()
              })
              child.kill("SIGTERM")
            })
          ).pipe(Effect.andThen(Effect.sync(() => rmSync(dataDir, { recursive: true, force: true }))))
      )

      const base = `http://127.0.0.1:${port}`
      const answers: Array<{ path: string; status: number; code: string | undefined }> = []
      let readyAt: number | undefined = undefined
      // Until ready, then one more round of every probe.
      for (let round = 0; readyAt === undefined || round <= readyAt + 1; round++) {
        if (child.exitCode !== null) return yield* Effect.die(new Error(`the server exited with ${child.exitCode}`))
        const results = yield* Effect.promise(() => Promise.all(PROBES.map((p) => probe(base, p))))
        for (const result of results) {
          if (result === undefined) continue
          answers.push(result)
          if (result.path === "/readyz" && result.status === 200 && readyAt === undefined) readyAt = round
        }
        yield* Effect.sleep("50 millis")
      }

      for (const answer of answers) {
        if (answer.path === "/healthz") assert.strictEqual(answer.status, 200)
        else if (answer.status === 503) assert.strictEqual(answer.code, "not_ready", JSON.stringify(answer))
      }
      const early = answers.filter((a) => a.status === 503 && a.code === "not_ready")
      assert.isAbove(early.length, 0, "some requests arrived while the server was starting")
      assert.isTrue(early.some((a) => a.path === "/api/agent/chat"), "a route's early answer is 503 not_ready")
      // After ready, the routes answer normally.
      const last = answers.slice(-PROBES.length)
      assert.deepStrictEqual(last.map((a) => [a.path, a.status]), [
        ["/healthz", 200],
        ["/readyz", 200],
        ["/api/chats/some-chat/messages", 404],
        ["/api/agent/chat", 502]
      ])
    }).pipe(Effect.scoped), { timeout: 180_000 }) // the start takes ~5 s alone, much longer on a loaded machine
})
