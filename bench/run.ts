/**
 * `npm run bench`: what Switchboard adds to every call, measured against a
 * floor in the same run, on one machine, over loopback. Figures only, no
 * assertions (a benchmark is never a test).
 *
 * Processes (each its own event loop):
 *   - this process: the load generator (`load.ts`: undici Pool, closed loop, `--concurrency` in flight);
 *   - `upstream.ts`: the 0 ms OpenAI-compatible mock (and the orchestrator case's fake chat route);
 *   - `proxy.ts`: the floors (node:http pass-through; pass-through after one INSERT);
 *   - `sse-relay.ts`: the stream case's floor (a node:http SSE relay of the mock's streamed answer);
 *   - `stack-proxy.ts`, `stack-sse-relay.ts`: the same two floors written on the server's stack (what
 *     the stack costs before a route does anything of its own; printed, no target);
 *   - the real server (its build, `dist/server/src/main.js`, as `npm start` runs it), on the embedded database and, with
 *     `DATABASE_URL`, on a scratch database of that PostgreSQL;
 *   - `orchestrator.ts`: the promise API `run()` vs a hand-written fetch loop;
 *   - the scale case's own (`scale.ts`): a provider fake at a model's pace, the SSE relay and a fresh
 *     server per N, loaded by `burst.ts` (N turns at once, a connection each); its background part
 *     (`background.ts`): a fake that answers the planner in 2 s and holds sub-agents' steps, and a
 *     fresh server per backend;
 *   - the users case's (`users.ts`): the product backend of `examples/product-backend.ts` in this
 *     process (its JWKS and its users' tokens) and a server of its own taking both JWTs and `CHAT_TOKEN`.
 *
 * Every case measures its floor in the same run, `--runs` times, interleaved
 * (floor, case, floor, case, …) after one warm-up of each; the ratio of each
 * pair is computed and the median ratio is the figure that counts. The table
 * (markdown) goes to stdout, the whole record to `bench/results/latest.json`.
 *
 * This file is the run's order (`main`) and its end (Ctrl+C included); the rest, a role a module:
 * `options.ts` (the options below, parsed on import), `postgres.ts` (the scratch database),
 * `phase.ts` (one measured phase; floor and case interleaved), `requests.ts` (the bodies sent,
 * their checks), `record.ts` (the figures, the table), `floors.ts` (the floors' processes), and the
 * cases: `chat-cases.ts` (chat, chatid, memory), `stream-case.ts`, `planner-cases.ts` (planner,
 * retention), `client-cases.ts` (console, orchestrator), `jobs-case.ts`, `users-case.ts`, `scale.ts`.
 *
 * Options:
 *   --quick                 about a minute or two: 2 s phases, 3 s warm-up
 *   --duration=10           measured phase, seconds
 *   --warmup=5              warm-up phase of each target, seconds (the JIT needs a few)
 *   --runs=3                interleaved runs of each case and its floor
 *   --concurrency=32        connections = requests in flight
 *   --conversations=500     orchestrator case: conversations per measured run
 *   --only=chat,chatid,stream,planner,retention,orchestrator,jobs,console,scale,users   run only these cases (memory comes with chatid;
 *                          stream's memory figure compares with chatid's when both run)
 *   --decisions=1000000     retention case: decisions in the table (10 % prunable); --quick: 100,000
 *   --cpu-prof=DIR          write a V8 CPU profile of each server process (and the orchestrator child) to DIR
 *   --server-env=NAME=VALUE an extra variable for the server processes (repeatable), for A/B runs
 *   --backends=embedded,postgres   the servers' databases (default: embedded, and postgres with DATABASE_URL)
 *   --think-ms=250          jobs case: a chat's mean pause between its turns (0: back-to-back, see bench/jobs.ts)
 *   --scale-n=500,1000,2000 scale case: the turns started at once, one burst per N and target; --quick: 250
 *                           (its background part: 1,000 hosts, 1,000 jobs, 500 turns; --quick: 100 each)
 *
 *   npm run bench                      # ~10 min (the scale case ~3 of them, the users case ~2)
 *   npm run bench -- --quick           # ~1 min
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench   # adds the PostgreSQL rows
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { availableParallelism, cpus, loadavg, totalmem } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { build, buildWeb } from "../scripts/build.ts"
import { backgroundCase } from "./background.ts"
import { chatCase, chatIdCase, memoryCase } from "./chat-cases.ts"
import { consoleCase, orchestratorCase } from "./client-cases.ts"
import { jobsRunCase } from "./jobs-case.ts"
import { backends, databaseUrl, options } from "./options.ts"
import { PLANNER_ENV, plannerCase, retentionCase } from "./planner-cases.ts"
import { createScratch, dropScratchDatabase, freshScratchDatabase, scratchUrl } from "./postgres.ts"
import { errorLines, peakRssMbOf, ROOT, startHelper, startServer, stop, stopAll, upstreamCount } from "./processes.ts"
import { failures, fmt, machineNotes, records, table } from "./record.ts"
import { newChatBody } from "./requests.ts"
import { scaleCase } from "./scale.ts"
import type { ScaleResult } from "./scale.ts"
import { streamCase } from "./stream-case.ts"
import { usersCase } from "./users-case.ts"

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))
const UPSTREAM = here("./upstream.ts")
const RESULTS = here("./results/")

let shuttingDown = false
const shutdown = async (code: number) => {
  if (shuttingDown) return
  shuttingDown = true
  await stopAll()
  await dropScratchDatabase()
  process.exit(code)
}
process.on("SIGINT", () => {
  console.error("\ninterrupted: stopping child processes")
  void shutdown(130)
})
process.on("SIGTERM", () => void shutdown(143))

// ---------------------------------------------------------------------------
// The run

const main = async () => {
  const began = new Date()
  const wantsServer = ["chat", "chatid", "stream", "planner", "retention", "jobs", "console", "users"].some((name) => options.cases.includes(name))
  const machine = {
    nproc: availableParallelism(),
    cpu: cpus()[0]?.model ?? "unknown",
    memoryGb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    loadavgAtStart: loadavg().map((n) => Number(n.toFixed(2)))
  }
  console.log(
    `Switchboard benchmark${options.quick ? " (quick)" : ""}: ${machine.nproc} cores (${machine.cpu}), ${machine.memoryGb} GB, Node ${machine.node}, ` +
      `load average ${machine.loadavgAtStart.join(" ")}`
  )
  console.log(
    `${options.concurrency} connections, ${options.durationMs / 1000} s measured phases after a ${options.warmupMs / 1000} s warm-up, ` +
      `${options.runs} runs interleaved with the floor; the load generator, the mock and the target share the machine.`
  )

  // The server is measured as `npm start` runs it: from its build.
  if (wantsServer || options.cases.includes("scale")) build()
  if (options.cases.includes("console")) buildWeb()
  const upstream = await startHelper("upstream", UPSTREAM, [])
  const attempt = async (name: string, f: () => Promise<void>) => {
    try {
      await f()
    } catch (error) {
      if (shuttingDown) throw error
      failures.push(name)
      // An SqlError's message is generic: its cause says what the database refused.
      const cause = (error as { cause?: unknown; reason?: { cause?: unknown } } | null)?.reason?.cause ?? (error as { cause?: unknown } | null)?.cause
      console.log(
        `  ${name}: FAILED: ${error instanceof Error ? error.message : String(error)}` +
          (cause instanceof Error ? ` (${cause.message})` : "")
      )
    }
  }

  for (const backend of backends) {
    if (!wantsServer) break
    await attempt(`server (${backend})`, async () => {
      if (backend === "postgres") await createScratch()
      const server = await startServer({
        name: `server (${backend})`,
        upstreamPort: upstream.port,
        databaseUrl: backend === "postgres" ? scratchUrl : undefined,
        cpuProfDir: options.cpuProfDir,
        env: { ...PLANNER_ENV, ...options.serverEnv }
      })
      try {
        if (backend === "embedded" && options.cases.includes("chat")) await attempt("chat", () => chatCase(upstream, server))
        if (backend === "embedded" && options.cases.includes("console")) await attempt("console", () => consoleCase(server))
        let pgliteAlone: number | undefined
        let chatIdPeak: number | undefined
        if (options.cases.includes("chatid")) {
          await attempt(`chatid (${backend})`, async () => {
            pgliteAlone = await chatIdCase(upstream, server, backend)
            chatIdPeak = peakRssMbOf(server.child.pid)
          })
        }
        if (options.cases.includes("chatid")) memoryCase(server, backend, pgliteAlone)
        // After chatid: the stream case starts the server's peak RSS over, and compares it with chatid's.
        if (options.cases.includes("stream")) await attempt(`stream (${backend})`, () => streamCase(upstream, server, backend, chatIdPeak))
        if (options.cases.includes("planner")) await attempt(`planner (${backend})`, () => plannerCase(upstream, server, backend))
        if (options.cases.includes("retention")) await attempt(`retention (${backend})`, () => retentionCase(server, backend))
        if (options.cases.includes("jobs")) await attempt(`jobs (${backend})`, () => jobsRunCase(upstream, backend))
        if (options.cases.includes("users")) await attempt(`users (${backend})`, () => usersCase(upstream, backend))
        const errors = errorLines(server.logFile)
        if (errors.length > 0) machineNotes.push(`server (${backend}) logged ${errors.length} errors, first: ${errors[0]!.slice(0, 300)}`)
      } finally {
        await stop(server.child)
      }
    })
  }
  if (options.cases.includes("orchestrator")) await attempt("orchestrator", () => orchestratorCase(upstream))
  let scale: ScaleResult | undefined
  let background: Awaited<ReturnType<typeof backgroundCase>> | undefined
  if (options.cases.includes("scale")) {
    await attempt("scale", async () => {
      scale = await scaleCase({
        ns: options.scaleNs,
        backends,
        // Its own scratch database: the earlier cases' chats are not the scale case's to read past.
        scratchDatabase: freshScratchDatabase,
        chatBody: newChatBody,
        serverEnv: options.serverEnv,
        cpuProfDir: options.cpuProfDir
      })
      failures.push(...scale.failures)
      machineNotes.push(...scale.notes)
    })
    await attempt("scale background", async () => {
      const sizes = options.quick ? { hosts: 100, jobs: 100, turns: 100 } : { hosts: 1000, jobs: 1000, turns: 500 }
      background = await backgroundCase({
        backends,
        scratchDatabase: freshScratchDatabase,
        chatBody: newChatBody,
        serverEnv: options.serverEnv,
        ...sizes
      })
      failures.push(...background.failures)
    })
  }

  const counts = await upstreamCount(upstream.child).catch(() => undefined)
  await stop(upstream.child)
  await dropScratchDatabase()

  const loadavgAtEnd = loadavg().map((n) => Number(n.toFixed(2)))
  const output = table(options.runs)
  if (records.length > 0) console.log(`\n${output}\n`)
  for (const r of records) for (const note of r.notes) console.log(`note (${r.name}, ${r.backend}): ${note}`)
  for (const note of machineNotes) console.log(`note: ${note}`)
  console.log(
    `load average at start ${machine.loadavgAtStart.join(" ")}, at end ${loadavgAtEnd.join(" ")}` +
      (counts === undefined ? "" : `; the mock served ${counts.requests.toLocaleString("en-US")} requests`)
  )
  const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`
  const result = {
    startedAt: began.toISOString(),
    seconds: (Date.now() - began.getTime()) / 1000,
    command: databaseUrl === undefined ? command : `DATABASE_URL=… ${command}`,
    machine: { ...machine, loadavgAtEnd },
    options,
    cases: records,
    failures,
    notes: machineNotes,
    table: output,
    ...(scale === undefined ? {} : { scale }),
    ...(background === undefined ? {} : { background })
  }
  mkdirSync(RESULTS, { recursive: true })
  const stamp = began.toISOString().replace(/[:.]/g, "-")
  writeFileSync(join(RESULTS, `${stamp}.json`), `${JSON.stringify(result, null, 2)}\n`)
  writeFileSync(join(RESULTS, "latest.json"), `${JSON.stringify(result, null, 2)}\n`)
  console.log(`written: ${join(RESULTS, "latest.json").replace(ROOT, "")} (and ${stamp}.json)`)
  if (failures.length > 0) console.log(`FAILED: ${failures.join("; ")}`)
  console.log(`total ${fmt(result.seconds, 1)} s`)
}

main().then(
  () => shutdown(failures.length > 0 ? 1 : 0),
  (error: unknown) => {
    if (!shuttingDown) console.error(error instanceof Error ? error.message : error)
    return shutdown(1)
  }
)
