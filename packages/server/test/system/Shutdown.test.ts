/**
 * SIGTERM, as a process manager sends it: the server (the production build,
 * a real process) shuts down gracefully — the job it was running given back
 * (no lease left to expire, the run not counted) — and exits 0, which is
 * what process managers read as a clean stop (runMain's default is 130 for
 * an interruption). A start that fails still exits non-zero.
 *
 * On the suite's database: a scratch database of DATABASE_URL, or the
 * embedded one in a fresh DATA_DIR, read after the process exited.
 */
import { assert, describe, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { layerEmbeddedPg } from "../../src/db/EmbeddedPostgres.ts"
import { FakeOpenAi } from "@switchboard/providers/testing"
import type { RecordedRequest } from "@switchboard/providers/testing"
import { freePort, runServerProcess, startServerProcess } from "../support/ServerProcess.ts"
import { backend, makeTestDatabase } from "../support/TestDatabase.ts"
import { postJsonAt, requestAt } from "../support/TestServer.ts"
import { eventually } from "../support/JobsHelpers.ts"

const lastMessage = (request: RecordedRequest) => {
  const messages = (request.body as { messages: Array<{ role: string; content: string | null }> }).messages
  return messages.at(-1)!
}

/** The suite's database for a server process: its environment, and how to read it once the process is gone. */
const databaseFor = Effect.gen(function*() {
  if (backend === "postgres") {
    const db = yield* makeTestDatabase
    const client = PgClient.layer({ url: Redacted.make(db.url!), maxConnections: 1 })
    return { env: { DATABASE_URL: db.url! }, client: client as Layer.Layer<SqlClient.SqlClient, unknown> }
  }
  const dataDir = yield* Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "switchboard-shutdown-"))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )
  // Opened only after the server exited: it takes the data directory's lock.
  return { env: { DATA_DIR: dataDir }, client: layerEmbeddedPg(join(dataDir, "pgdata")) as Layer.Layer<SqlClient.SqlClient, unknown> }
})

describe(`shutdown of the server process (${backend})`, () => {
  it.live("SIGTERM mid-job: the job is given back (no lease left, the run not counted) and the process exits 0", () =>
    Effect.gen(function*() {
      const db = yield* databaseFor
      const fake = yield* FakeOpenAi.scoped()
      let research = 0
      fake.respondWith((request) => {
        if ((request.body as { model: string }).model === "research-model") {
          research++
          return FakeOpenAi.reply.hang()
        }
        const last = lastMessage(request)
        if (last.role === "tool") return FakeOpenAi.reply.text("dispatched")
        return FakeOpenAi.reply.toolCalls([{ id: "call_stop_1", name: "research", arguments: JSON.stringify({ question: "sigma.js v3" }) }])
      })
      const server = yield* startServerProcess({
        ...db.env,
        PORT: String(yield* freePort),
        LLM_PROVIDER: "openai-compatible",
        LLM_MODEL: "teacher-model",
        LLM_API_KEY: "sk-shutdown-test",
        LLM_BASE_URL: fake.url,
        JOB_MODEL_RESEARCH: "research-model",
        // A lease that outlives the test: a job not given back would still be held when it is read.
        JOB_LEASE_MS: "600000",
        LOG_LEVEL: "info"
      })
      yield* eventually(requestAt(server.url, "/readyz"), (r) => r.status === 200, "the server ready", 120_000)
      const turn = yield* postJsonAt(server.url, "/api/agent/chat", {
        chatId: "sigterm",
        messages: [{ id: "u1", role: "user", content: "research sigma.js v3", timestamp: 1 }]
      })
      assert.strictEqual(turn.status, 200, turn.text)
      // The sub-agent is mid-run: its provider call is in flight, the job's lease held.
      yield* Effect.promise(() => fake.waitFor(() => research >= 1, 30_000))

      server.child.kill("SIGTERM")
      const code = yield* Effect.promise(() => server.exited)
      assert.strictEqual(code, 0, `exit code after SIGTERM; output:\n${server.output()}`)
      assert.include(server.output(), "jobs: runner stopped, 1 held job given back", "the operator's log says so")

      const rows = yield* SqlClient.SqlClient.use((sql) =>
        sql<{ lease_owner: string | null; run_attempts: number; phase: string }>`
          SELECT lease_owner, run_attempts, phase FROM jobs WHERE chat_id = 'sigterm'`
      ).pipe(Effect.provide(db.client), Effect.orDie)
      assert.deepStrictEqual(rows, [{ lease_owner: null, run_attempts: 0, phase: "run" }], "given back, not counted, still to run")
    }).pipe(Effect.scoped), { timeout: 180_000 })

  // PostgreSQL only: two server processes cannot share the embedded database (its DATA_DIR lock).
  it.live.skipIf(backend !== "postgres")(
    "two processes: the job SIGTERM gave back is run by the other one at once (leases and sweep far longer than the test), and finishes",
    () =>
      Effect.gen(function*() {
        const db = yield* databaseFor
        const fake = yield* FakeOpenAi.scoped()
        let research = 0
        fake.respondWith((request) => {
          if ((request.body as { model: string }).model === "research-model") {
            research++
            return research === 1 ? FakeOpenAi.reply.hang() : FakeOpenAi.reply.text("Sigma.js v3 draws graphs with WebGL.")
          }
          const last = lastMessage(request)
          if (last.role === "tool") return FakeOpenAi.reply.text("dispatched")
          if (typeof last.content === "string" && last.content.startsWith("research ")) {
            return FakeOpenAi.reply.toolCalls([{ id: "call_stop_2", name: "research", arguments: JSON.stringify({ question: "sigma.js v3" }) }])
          }
          return FakeOpenAi.reply.text("wake answer")
        })
        const env = {
          ...db.env,
          LLM_PROVIDER: "openai-compatible",
          LLM_MODEL: "teacher-model",
          LLM_API_KEY: "sk-shutdown-test",
          LLM_BASE_URL: fake.url,
          JOB_MODEL_RESEARCH: "research-model",
          // Neither the lease's expiry nor the sweep can hand the job over within the test: only the
          // release's notification can.
          JOB_LEASE_MS: "600000",
          JOB_SWEEP_MS: "600000",
          LOG_LEVEL: "info"
        }
        const a = yield* startServerProcess({ ...env, PORT: String(yield* freePort) })
        yield* eventually(requestAt(a.url, "/readyz"), (r) => r.status === 200, "A ready", 60_000)
        const turn = yield* postJsonAt(a.url, "/api/agent/chat", {
          chatId: "sigterm-2",
          messages: [{ id: "u1", role: "user", content: "research sigma.js v3", timestamp: 1 }]
        })
        assert.strictEqual(turn.status, 200, turn.text)
        yield* Effect.promise(() => fake.waitFor(() => research >= 1, 30_000))
        const b = yield* startServerProcess({ ...env, PORT: String(yield* freePort) })
        yield* eventually(requestAt(b.url, "/readyz"), (r) => r.status === 200, "B ready", 60_000)

        a.child.kill("SIGTERM")
        assert.strictEqual(yield* Effect.promise(() => a.exited), 0, a.output())
        const [job] = yield* eventually(
          requestAt(b.url, "/api/jobs?chatId=sigterm-2").pipe(Effect.map((r) => r.json.jobs as Array<{ status: string }>)),
          (jobs) => jobs[0]?.status !== "running",
          "the job finished by B",
          30_000
        )
        assert.strictEqual(job!.status, "done")
        assert.strictEqual(research, 2, "run once more, by B")
      }).pipe(Effect.scoped),
    { timeout: 180_000 }
  )

  it.live("a start that fails (the port is taken) exits non-zero", () =>
    Effect.gen(function*() {
      const taken = yield* Effect.acquireRelease(
        Effect.promise(() =>
          new Promise<ReturnType<typeof createServer>>((resolve) => {
            const blocker = createServer()
            blocker.listen(0, "127.0.0.1", () => resolve(blocker))
          })
        ),
        (blocker) => Effect.promise(() => new Promise<void>((resolve) => blocker.close(() => resolve())))
      )
      const dataDir = yield* Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "switchboard-shutdown-"))),
        (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
      )
      const { code, output } = yield* runServerProcess({
        DATA_DIR: dataDir,
        PORT: String((taken.address() as AddressInfo).port),
        LOG_LEVEL: "info"
      })
      assert.isNotNull(code, output)
      assert.notStrictEqual(code, 0, output)
    }).pipe(Effect.scoped), { timeout: 120_000 })

  // `switchboard serve` is `npm start` run by the CLI's own runtime: its clean stop must exit 0 too.
  it.live("switchboard serve: SIGTERM and SIGINT each stop it with exit code 0", () =>
    Effect.gen(function*() {
      for (const signal of ["SIGTERM", "SIGINT"] as const) {
        const db = yield* databaseFor
        const server = yield* startServerProcess(
          { ...db.env, PORT: String(yield* freePort), LOG_LEVEL: "info" },
          [join(import.meta.dirname, "../../../cli/bin/switchboard.js"), "serve"]
        )
        yield* eventually(requestAt(server.url, "/readyz"), (r) => r.status === 200, "the server ready", 120_000)
        server.child.kill(signal)
        const code = yield* Effect.promise(() => server.exited)
        assert.strictEqual(code, 0, `${signal}: ${server.output()}`)
      }
    }).pipe(Effect.scoped), { timeout: 240_000 })
})
