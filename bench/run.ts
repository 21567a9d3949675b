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
import { PgClient } from "@effect/sql-pg"
import { Effect, ManagedRuntime, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import type { ChildProcess } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdirSync, writeFileSync } from "node:fs"
import { availableParallelism, cpus, loadavg, totalmem } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { jobsCase } from "./jobs.ts"
import { SCALE_NS, scaleCase } from "./scale.ts"
import type { ScaleResult } from "./scale.ts"
import { backgroundCase } from "./background.ts"
import { createScratchDatabase } from "./scratch.ts"
import type { ScratchDatabase } from "./scratch.ts"
import { activeProfile, apiCall, readyHosts } from "./hosts.ts"
import { startUsersAuth } from "./users.ts"
import { completionDeltaReader, deltaReader } from "./sse.ts"
import { build, buildWeb, firstLoadOf } from "../scripts/build.ts"
import { consoleLoads } from "./console.ts"
import type { JobsFigures } from "./jobs.ts"
import { LoadGenerator } from "./load.ts"
import type { PhaseResult, Target } from "./load.ts"
import {
  ask,
  cleanEnv,
  cpuMsOf,
  errorLines,
  machineBusyMs,
  peakRssMbOf,
  resetPeakRss,
  ROOT,
  runqueueMsOf,
  selfCpuMs,
  startHelper,
  startServer,
  stop,
  stopAll,
  upstreamCount,
  workDir
} from "./processes.ts"
import type { ServerProcess } from "./processes.ts"

// ---------------------------------------------------------------------------
// Options

const { values: flags } = parseArgs({
  options: {
    quick: { type: "boolean" },
    duration: { type: "string" },
    warmup: { type: "string" },
    runs: { type: "string" },
    concurrency: { type: "string" },
    conversations: { type: "string" },
    decisions: { type: "string" },
    only: { type: "string" },
    "cpu-prof": { type: "string" },
    "server-env": { type: "string", multiple: true },
    backends: { type: "string" },
    "think-ms": { type: "string" },
    "scale-n": { type: "string" },
    help: { type: "boolean", short: "h" }
  },
  strict: true
})

if (flags.help === true) {
  console.log(
    "usage: npm run bench -- [--quick] [--duration=s] [--warmup=s] [--runs=n] [--concurrency=n] [--conversations=n] " +
      "[--only=chat,chatid,stream,planner,retention,orchestrator,jobs,console,scale,users] [--decisions=n] [--cpu-prof=DIR] [--server-env=NAME=VALUE] " +
        "[--backends=embedded,postgres] [--think-ms=n] [--scale-n=500,1000,2000]"
  )
  process.exit(0)
}

const numberOption = (raw: string | undefined, name: string, fallback: number, integer: boolean): number => {
  if (raw === undefined || raw === "") return fallback
  const n = Number(raw)
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    console.error(`invalid --${name}=${JSON.stringify(raw)}: expected a positive ${integer ? "integer" : "number"}`)
    process.exit(2)
  }
  return n
}

const quick = flags.quick === true
/** A comma-separated option's names, each one of `known` (else the run stops naming it), in `known`'s order. */
const namesOption = <N extends string>(raw: string, option: string, what: string, known: ReadonlyArray<N>): Array<N> => {
  const names = raw.split(",").map((s) => s.trim())
  for (const name of names) {
    if (!(known as ReadonlyArray<string>).includes(name)) {
      console.error(`unknown ${what} ${JSON.stringify(name)} in --${option} (known: ${known.join(", ")})`)
      process.exit(2)
    }
  }
  return known.filter((name) => names.includes(name))
}

const CASES = ["chat", "chatid", "stream", "planner", "retention", "orchestrator", "jobs", "console", "scale", "users"] as const
const only: ReadonlyArray<string> = flags.only === undefined ? [...CASES] : namesOption(flags.only, "only", "case", CASES)

const options = {
  quick,
  durationMs: numberOption(flags.duration, "duration", quick ? 2 : 10, false) * 1000,
  warmupMs: numberOption(flags.warmup, "warmup", quick ? 3 : 5, false) * 1000,
  runs: numberOption(flags.runs, "runs", 3, true),
  concurrency: numberOption(flags.concurrency, "concurrency", 32, true),
  conversations: numberOption(flags.conversations, "conversations", 500, true),
  warmupConversations: quick ? 300 : 500,
  decisions: numberOption(flags.decisions, "decisions", quick ? 100_000 : 1_000_000, true),
  cases: only,
  cpuProfDir: flags["cpu-prof"],
  thinkMs: flags["think-ms"] === "0" ? 0 : numberOption(flags["think-ms"], "think-ms", 250, false),
  scaleNs: (() => {
    const ns = (flags["scale-n"] ?? "").split(",").map((n) => n.trim()).filter((n) => n !== "")
    return ns.length === 0 ? (quick ? [250] : [...SCALE_NS]) : ns.map((n) => numberOption(n, "scale-n", 0, true))
  })(),
  serverEnv: Object.fromEntries((flags["server-env"] ?? []).map((pair) => {
    const at = pair.indexOf("=")
    if (at <= 0) {
      console.error(`invalid --server-env=${JSON.stringify(pair)}: expected NAME=VALUE`)
      process.exit(2)
    }
    return [pair.slice(0, at), pair.slice(at + 1)]
  }))
}

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))
const UPSTREAM = here("./upstream.ts")
const PROXY = here("./proxy.ts")
const SSE_RELAY = here("./sse-relay.ts")
const STACK_SSE_RELAY = here("./stack-sse-relay.ts")
const STACK_PROXY = here("./stack-proxy.ts")
const ORCHESTRATOR = here("./orchestrator.ts")
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
// PostgreSQL: a scratch database for the server and its floor, dropped at the end

const databaseUrl = process.env["DATABASE_URL"] || undefined

const BACKENDS = ["embedded", "postgres"] as const
const backends = flags.backends === undefined
  ? BACKENDS.filter((b) => b === "embedded" || databaseUrl !== undefined)
  : namesOption(flags.backends, "backends", "backend", BACKENDS)
if (backends.includes("postgres") && databaseUrl === undefined) {
  console.error("--backends=postgres needs DATABASE_URL (a PostgreSQL the run may create a scratch database in)")
  process.exit(2)
}
let scratch: ScratchDatabase | undefined
/** The current scratch database's URL (`undefined` until one is made). */
let scratchUrl: string | undefined

const createScratch = async () => {
  scratch = await createScratchDatabase(databaseUrl!)
  scratchUrl = scratch.url
}

/** A fresh scratch database (dropped and created again), for a case that must not read an earlier one's rows. */
async function freshScratchDatabase() {
  await dropScratchDatabase()
  await createScratch()
  return scratchUrl!
}

async function dropScratchDatabase() {
  const dropping = scratch
  scratch = undefined
  await dropping?.drop()
}

// ---------------------------------------------------------------------------
// One measured phase of one target

interface Phase {
  readonly result: PhaseResult
  /** CPU time of the target process over the phase, in ms. */
  readonly targetCpuMs: number | undefined
  /** CPU time of the target process per successful request, in µs. */
  readonly cpuUsPerRequest: number | undefined
  /** % of one core used outside the load generator, the target and the upstream (other work on the machine). */
  readonly restPct: number | undefined
  /** How long the target's main thread, and the load generator's, waited for a CPU over the phase (`runqueueMsOf`), in ms. */
  readonly targetRunqueueMs: number | undefined
  readonly selfRunqueueMs: number | undefined
}

const phase = async (load: LoadGenerator, target: ChildProcess | undefined, upstream: ChildProcess, durationMs: number): Promise<Phase> => {
  const waits = () => ({ target: runqueueMsOf(target?.pid), self: runqueueMsOf(process.pid) })
  const before = { self: selfCpuMs(), target: cpuMsOf(target?.pid), upstream: cpuMsOf(upstream.pid), machine: machineBusyMs(), waits: waits() }
  const result = await load.run({ durationMs, maxRequests: 2_000_000 })
  const after = { self: selfCpuMs(), target: cpuMsOf(target?.pid), upstream: cpuMsOf(upstream.pid), machine: machineBusyMs(), waits: waits() }
  const delta = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : b - a)
  const targetMs = target === undefined ? 0 : delta(before.target, after.target)
  const upstreamMs = delta(before.upstream, after.upstream)
  const machineMs = delta(before.machine, after.machine)
  const restMs = machineMs === undefined || upstreamMs === undefined || targetMs === undefined
    ? undefined
    : Math.max(0, machineMs - (after.self - before.self) - targetMs - upstreamMs)
  return {
    result,
    targetCpuMs: target === undefined ? undefined : targetMs,
    cpuUsPerRequest: target === undefined || targetMs === undefined || result.ok === 0 ? undefined : (targetMs * 1000) / result.ok,
    restPct: restMs === undefined ? undefined : (restMs / result.elapsedMs) * 100,
    targetRunqueueMs: delta(before.waits.target, after.waits.target),
    selfRunqueueMs: delta(before.waits.self, after.waits.self)
  }
}

// The planner's settings (ignored by a build without the planner). Leases outlive the whole run.
const ADMIN_TOKEN = randomBytes(16).toString("hex")
const PLANNER_ENV = {
  ADMIN_TOKEN,
  CREDENTIAL_KEY: randomBytes(32).toString("base64"),
  TASK_LEASE_SECONDS: "3600",
  // The retention case starts the sweep itself; the periodic one must not run in between.
  PLANNER_PRUNE_INTERVAL_SECONDS: "86400"
}

const CHAT_BODY = JSON.stringify({ messages: [{ id: "u1", role: "user", content: "hello", timestamp: 1 }] })
const COMPLETION_BODY = JSON.stringify({ model: "bench", messages: [{ role: "user", content: "hello" }] })
const runId = Date.now().toString(36)
let chatSeq = 0
const BENCH_MESSAGES = [{ id: "u1", role: "user", content: "hello", timestamp: 1 }]
const newChatBody = () => JSON.stringify({ chatId: `bench-${runId}-${++chatSeq}`, messages: BENCH_MESSAGES })

const checkCompletion = (status: number, text: string) =>
  status === 200 && (JSON.parse(text) as { choices?: Array<{ message?: { content?: unknown } }> }).choices?.[0]?.message?.content === "ok"
    ? undefined
    : `expected 200 with the completion "ok"`
const checkChatAnswer = (status: number, text: string) => {
  if (status !== 200) return "expected 200"
  const body = JSON.parse(text) as { content?: unknown; messageId?: unknown }
  return body.content === "ok" && typeof body.messageId === "string" ? undefined : `expected { content: "ok", messageId }`
}

/** A load generator for one target, its answer checked once before anything is measured. */
const loadFor = async (name: string, target: Target, check: (status: number, text: string) => string | undefined) => {
  const load = new LoadGenerator(target, options.concurrency)
  const smoke = await load.once()
  const problem = check(smoke.status, smoke.text)
  if (problem !== undefined) {
    await load.close()
    throw new Error(`${name}: smoke request failed: ${problem} (HTTP ${smoke.status}: ${smoke.text.slice(0, 300)})`)
  }
  return load
}

// ---------------------------------------------------------------------------
// The record

interface Run {
  readonly figure: number
  readonly floor: number
  /** figure ÷ floor, or figure − floor for an "added" comparison. */
  readonly vs: number
}

interface CaseRecord {
  readonly id: string
  readonly name: string
  readonly backend: "embedded" | "postgres" | "—"
  readonly unit: string
  readonly floorName: string
  readonly compare: "ratio" | "added" | "none"
  readonly runs: ReadonlyArray<Run>
  /** How the runs make the figure: their median (default), or their sum (a count that must stay 0). */
  readonly aggregate?: "median" | "sum"
  readonly figure: number
  readonly floor: number
  readonly vs: number
  readonly target: string
  readonly holds: boolean | undefined
  readonly notes: ReadonlyArray<string>
}

const records: Array<CaseRecord> = []
const failures: Array<string> = []
const machineNotes: Array<string> = []

const median = (values: ReadonlyArray<number>) => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b)
  if (sorted.length === 0) return Number.NaN
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

const record = (spec: Omit<CaseRecord, "figure" | "floor" | "vs" | "holds"> & { readonly holds: (vs: number, figure: number) => boolean | undefined }) => {
  const figure = spec.aggregate === "sum"
    ? spec.runs.reduce((n, r) => n + r.figure, 0)
    : median(spec.runs.map((r) => r.figure))
  const floor = median(spec.runs.map((r) => r.floor))
  const vs = median(spec.runs.map((r) => r.vs))
  const entry: CaseRecord = { ...spec, figure, floor, vs, holds: Number.isFinite(vs) || spec.compare === "none" ? spec.holds(vs, figure) : false }
  records.push(entry)
  return entry
}

const pairsOf = (figures: ReadonlyArray<number>, floors: ReadonlyArray<number>, compare: "ratio" | "added"): Array<Run> =>
  figures.map((figure, i) => {
    const floor = floors[i]!
    return { figure, floor, vs: compare === "ratio" ? figure / floor : figure - floor }
  })

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits }) : "n/a")

const phaseNotes = (label: string, phases: ReadonlyArray<Phase>) => {
  const notes: Array<string> = []
  const errors = phases.reduce((n, p) => n + p.result.errors, 0)
  if (errors > 0) notes.push(`${label}: ${errors} failed requests (${phases.flatMap((p) => p.result.errorSamples).slice(0, 2).join("; ")})`)
  const rest = median(phases.map((p) => p.restPct ?? Number.NaN))
  if (rest > 25) notes.push(`${label}: ${fmt(rest)} % of a core went outside the measured processes meanwhile (kernel networking, other work on the machine)`)
  return notes
}

/** CPU time of the target per event its reader timed (a streamed delta delivered), in µs. */
const cpuUsPerEvent = (p: Phase) =>
  p.targetCpuMs === undefined || p.result.events === undefined || p.result.events.count === 0
    ? Number.NaN
    : (p.targetCpuMs * 1000) / p.result.events.count

const logPhase = (label: string, p: Phase) =>
  console.log(
    `    ${label}: ${fmt(p.result.rps)} req/s, p50 ${fmt(p.result.p50, 2)} ms, p99 ${fmt(p.result.p99, 2)} ms` +
      (p.cpuUsPerRequest === undefined ? "" : `, ${fmt(p.cpuUsPerRequest)} µs CPU/request`) +
      (p.result.events === undefined
        ? ""
        : `; ${fmt(p.result.events.count)} deltas: p50 ${fmt(p.result.events.p50, 2)} ms, p99 ${fmt(p.result.events.p99, 2)} ms, ` +
          `max ${fmt(p.result.events.max, 2)} ms, ${fmt(cpuUsPerEvent(p), 1)} µs CPU/delta`) +
      (p.result.errors > 0 ? `, ${p.result.errors} errors` : "") +
      (p.restPct === undefined ? "" : `, rest ${fmt(p.restPct)} %`) +
      (p.result.events === undefined || p.targetRunqueueMs === undefined
        ? ""
        : `; waited for a CPU: target ${fmt(p.targetRunqueueMs)} ms, load generator ${fmt(p.selfRunqueueMs ?? Number.NaN)} ms`)
  )

// ---------------------------------------------------------------------------
// The cases

/** Chat route, no tools, no chatId, vs the node:http pass-through proxy; p50s over the direct mock. */
const chatCase = async (upstream: { child: ChildProcess; port: number }, server: ServerProcess) => {
  console.log("\nchat route, no chatId — vs node:http pass-through proxy (and the mock called directly)")
  const proxy = await startHelper("pass-through proxy", PROXY, [String(upstream.port), "http"])
  const stackProxy = await startHelper("pass-through on the server's stack", STACK_PROXY, [String(upstream.port)])
  const direct = await loadFor("direct mock", { origin: `http://127.0.0.1:${upstream.port}`, path: "/v1/chat/completions", body: () => COMPLETION_BODY }, checkCompletion)
  const floor = await loadFor("pass-through proxy", { origin: `http://127.0.0.1:${proxy.port}`, path: "/v1/chat/completions", body: () => COMPLETION_BODY }, checkCompletion)
  const stack = await loadFor("pass-through on the server's stack", { origin: `http://127.0.0.1:${stackProxy.port}`, path: "/v1/chat/completions", body: () => COMPLETION_BODY }, checkCompletion)
  const route = await loadFor("chat route", { origin: `http://127.0.0.1:${server.port}`, path: "/api/agent/chat", body: () => CHAT_BODY }, checkChatAnswer)
  try {
    for (const [load, target] of [[direct, undefined], [floor, proxy.child], [stack, stackProxy.child], [route, server.child]] as const) {
      await phase(load, target, upstream.child, options.warmupMs)
    }
    const directs: Array<Phase> = []
    const floors: Array<Phase> = []
    const stacks: Array<Phase> = []
    const routes: Array<Phase> = []
    for (let i = 0; i < options.runs; i++) {
      console.log(`  run ${i + 1}/${options.runs}`)
      directs.push(await phase(direct, undefined, upstream.child, options.durationMs))
      logPhase("mock, direct        ", directs[i]!)
      floors.push(await phase(floor, proxy.child, upstream.child, options.durationMs))
      logPhase("pass-through proxy  ", floors[i]!)
      stacks.push(await phase(stack, stackProxy.child, upstream.child, options.durationMs))
      logPhase("pass-through, stack ", stacks[i]!)
      routes.push(await phase(route, server.child, upstream.child, options.durationMs))
      logPhase("chat route          ", routes[i]!)
    }
    const notes = [...phaseNotes("floor", floors), ...phaseNotes("route", routes)]
    record({
      id: "chat.throughput", name: "chat route, no tools: throughput", backend: "—", unit: "req/s",
      floorName: "node:http pass-through proxy", compare: "ratio",
      runs: pairsOf(routes.map((p) => p.result.rps), floors.map((p) => p.result.rps), "ratio"),
      target: ">= 0.7 × floor", holds: (vs) => vs >= 0.7, notes
    })
    record({
      id: "chat.p50added", name: "chat route, no tools: p50 added over the direct mock", backend: "—", unit: "ms",
      floorName: "pass-through proxy's p50 added", compare: "ratio",
      runs: pairsOf(
        routes.map((p, i) => p.result.p50 - directs[i]!.result.p50),
        floors.map((p, i) => p.result.p50 - directs[i]!.result.p50),
        "ratio"
      ),
      target: "<= 1.5 × floor", holds: (vs) => vs <= 1.5, notes: []
    })
    record({
      id: "chat.cpu", name: "chat route, no tools: CPU per request (server process)", backend: "—", unit: "µs",
      floorName: "pass-through proxy's CPU per request", compare: "ratio",
      runs: pairsOf(routes.map((p) => p.cpuUsPerRequest ?? Number.NaN), floors.map((p) => p.cpuUsPerRequest ?? Number.NaN), "ratio"),
      target: "(no target)", holds: () => undefined, notes: []
    })
    // What the stack costs before any of the route's own work (bench/stack-proxy.ts): informational.
    record({
      id: "chat.stack-throughput", name: "the pass-through written on the server's stack (HttpApi endpoint, schema'd body, the server's undici pool): throughput",
      backend: "—", unit: "req/s", floorName: "node:http pass-through proxy", compare: "ratio",
      runs: pairsOf(stacks.map((p) => p.result.rps), floors.map((p) => p.result.rps), "ratio"),
      target: "(no target)", holds: () => undefined, notes: phaseNotes("stack pass-through", stacks)
    })
    record({
      id: "chat.stack-cpu", name: "the pass-through written on the server's stack: CPU per request", backend: "—", unit: "µs",
      floorName: "pass-through proxy's CPU per request", compare: "ratio",
      runs: pairsOf(stacks.map((p) => p.cpuUsPerRequest ?? Number.NaN), floors.map((p) => p.cpuUsPerRequest ?? Number.NaN), "ratio"),
      target: "(no target)", holds: () => undefined, notes: []
    })
  } finally {
    await Promise.all([direct.close(), floor.close(), stack.close(), route.close()])
    await Promise.all([stop(proxy.child), stop(stackProxy.child)])
  }
}

/**
 * One warm-up of each, then `--runs` measured phases: floor, case, floor, case, … With `extras`
 * (diagnostic targets), each run measures them too, between its floor and its case.
 */
const interleaved = async (
  upstream: ChildProcess,
  floor: readonly [LoadGenerator, ChildProcess, string],
  route: readonly [LoadGenerator, ChildProcess, string],
  ...extras: ReadonlyArray<readonly [LoadGenerator, ChildProcess, string]>
) => {
  const all = [floor, ...extras, route]
  const width = Math.max(...all.map((target) => target[2].length))
  for (const [load, child] of all) await phase(load, child, upstream, options.warmupMs)
  const measured = all.map((): Array<Phase> => [])
  for (let i = 0; i < options.runs; i++) {
    console.log(`  run ${i + 1}/${options.runs}`)
    for (const [t, [load, child, name]] of all.entries()) {
      const p = await phase(load, child, upstream, options.durationMs)
      measured[t]!.push(p)
      logPhase(name.padEnd(width), p)
    }
  }
  return { floors: measured[0]!, routes: measured[measured.length - 1]!, extras: measured.slice(1, -1) }
}

/** Chat route with a new chatId per request (write-ahead turn) vs a proxy doing one INSERT per request. */
const chatIdCase = async (
  upstream: { child: ChildProcess; port: number },
  server: ServerProcess,
  backend: "embedded" | "postgres"
) => {
  console.log(`\nchat route, new chatId per request (${backend}) — vs node:http proxy doing one INSERT per request`)
  const proxy = await startInsertFloor(upstream.port, backend, "chatid")
  const floor = await loadFor("one-INSERT proxy", { origin: `http://127.0.0.1:${proxy.port}`, path: "/v1/chat/completions", body: newChatBody }, checkCompletion)
  const route = await loadFor("chat route", { origin: `http://127.0.0.1:${server.port}`, path: "/api/agent/chat", body: newChatBody }, checkChatAnswer)
  try {
    const { floors, routes } = await interleaved(upstream.child, [floor, proxy.child, "one-INSERT proxy"], [route, server.child, "chat route"])
    record({
      id: `chatid.throughput.${backend}`, name: "chat route, new chatId per request: throughput", backend, unit: "req/s",
      floorName: "one-INSERT proxy", compare: "ratio",
      runs: pairsOf(routes.map((p) => p.result.rps), floors.map((p) => p.result.rps), "ratio"),
      target: ">= 0.5 × floor", holds: (vs) => vs >= 0.5,
      notes: [...phaseNotes("floor", floors), ...phaseNotes("route", routes)]
    })
    record({
      id: `chatid.p99.${backend}`, name: "chat route, new chatId per request: p99", backend, unit: "ms",
      floorName: "one-INSERT proxy", compare: "ratio",
      runs: pairsOf(routes.map((p) => p.result.p99), floors.map((p) => p.result.p99), "ratio"),
      target: "(no target)", holds: () => undefined, notes: []
    })
    return peakRssMbOf(proxy.child.pid)
  } finally {
    await Promise.all([floor.close(), route.close()])
    await stop(proxy.child)
  }
}

const STREAM_HEADERS = { accept: "text/event-stream" }
const NO_CHAT_BODY = JSON.stringify({ messages: BENCH_MESSAGES })
const STREAM_COMPLETION_BODY = JSON.stringify({ model: "bench", messages: [{ role: "user", content: "hello" }], stream: true })
const checkStream = (status: number, text: string) =>
  status === 200 && text.includes(`"type":"text-delta"`) && !text.includes(`"type":"error"`) && text.endsWith("data: [DONE]\n\n")
    ? undefined
    : "expected 200 with text-delta chunks, no error chunk, and [DONE] last"

/**
 * Streamed turns (`Accept: text/event-stream`), a new chatId per turn (persisted, as production),
 * `--concurrency` at once; the mock streams 50 deltas 20 ms apart, each stamped with its send time
 * (`bench/upstream.ts`). Per delta: its latency from the mock's write to the load generator's read,
 * and the server's CPU per delta delivered, each against a bare node:http SSE relay of the same
 * stream (`bench/sse-relay.ts`). And the server's peak RSS during this case (its peak started over
 * when the case begins) against its peak through the chatid case, when that ran in this run.
 * Two diagnostic phases follow the pairs, as notes: the harness alone (the mock read directly) and
 * the same turns without a chatId (nothing stored), which parts the transcript's cost from the rest.
 */
const streamCase = async (
  upstream: { child: ChildProcess; port: number },
  server: ServerProcess,
  backend: "embedded" | "postgres",
  chatIdPeakMb: number | undefined
) => {
  console.log(`
streamed turns, new chatId per turn (${backend}): the mock's 50 deltas 20 ms apart — vs a node:http SSE relay`)
  const peakReset = resetPeakRss(server.child.pid)
  const relay = await startHelper("SSE relay", SSE_RELAY, [String(upstream.port)])
  const stackRelay = await startHelper("SSE relay on the server's stack", STACK_SSE_RELAY, [String(upstream.port)])
  const streamed = (port: number): Target => ({
    origin: `http://127.0.0.1:${port}`,
    path: "/api/agent/chat",
    body: newChatBody,
    headers: () => STREAM_HEADERS,
    reader: deltaReader
  })
  const floor = await loadFor("SSE relay", streamed(relay.port), checkStream)
  const stack = await loadFor("SSE relay on the server's stack", streamed(stackRelay.port), checkStream)
  const route = await loadFor("streamed chat route", streamed(server.port), checkStream)
  // The same turns without a chatId (nothing stored, no chat marker): how much of the route's cost is the transcript's.
  const unstored = await loadFor("streamed chat route, no chatId", { ...streamed(server.port), body: () => NO_CHAT_BODY }, checkStream)
  const alone = await loadFor(
    "the mock, read directly",
    { origin: `http://127.0.0.1:${upstream.port}`, path: "/v1/chat/completions", body: () => STREAM_COMPLETION_BODY, reader: completionDeltaReader },
    (status, text) => (status === 200 && text.endsWith("data: [DONE]\n\n") ? undefined : "expected 200 with an event stream ending [DONE]")
  )
  try {
    const { floors, routes, extras } = await interleaved(
      upstream.child,
      [floor, relay.child, "SSE relay"],
      [route, server.child, "streamed chat route"],
      [stack, stackRelay.child, "SSE relay, server's stack"]
    )
    const stacks = extras[0]!
    // The harness alone (no process between the mock and the load generator): what of the latency is
    // the machine's and the harness's, whatever the target (docs/performance.md).
    await phase(alone, undefined, upstream.child, options.warmupMs)
    const harness = await phase(alone, undefined, upstream.child, options.durationMs)
    logPhase("the mock, read directly (no target)", harness)
    await phase(unstored, server.child, upstream.child, options.warmupMs)
    const withoutChat = await phase(unstored, server.child, upstream.child, options.durationMs)
    logPhase("streamed chat route, no chatId (nothing stored)", withoutChat)
    const waited = (phases: ReadonlyArray<Phase>, of: (p: Phase) => number | undefined) => fmt(median(phases.map((p) => of(p) ?? Number.NaN)))
    const peak = peakRssMbOf(server.child.pid) ?? Number.NaN
    const p99s = (phases: ReadonlyArray<Phase>) => phases.map((p) => p.result.events?.p99 ?? Number.NaN)
    const p50s = (phases: ReadonlyArray<Phase>) => phases.map((p) => p.result.events?.p50 ?? Number.NaN)
    const delivered = (phases: ReadonlyArray<Phase>) => fmt(median(phases.map((p) => p.result.events?.count ?? Number.NaN)))
    record({
      id: `stream.p99.${backend}`, name: "streamed turn: p99 latency per delta (the mock's write → the client's read)", backend, unit: "ms",
      floorName: "node:http SSE relay", compare: "added",
      runs: pairsOf(p99s(routes), p99s(floors), "added"),
      target: "<= 5 ms", holds: (_vs, figure) => figure <= 5,
      notes: [
        `deltas delivered per measured phase (median): server ${delivered(routes)}, relay ${delivered(floors)}`,
        `the harness alone (the load generator reading the mock's stream, no target between): p99 ${fmt(harness.result.events?.p99 ?? Number.NaN, 2)} ms, p50 ${fmt(harness.result.events?.p50 ?? Number.NaN, 2)} ms`,
        `the same turns without a chatId (nothing stored; one phase after the pairs): p99 ${fmt(withoutChat.result.events?.p99 ?? Number.NaN, 2)} ms, ` +
          `${fmt(cpuUsPerEvent(withoutChat), 1)} µs CPU/delta, ${fmt(cpuUsPerEvent(withoutChat) / median(floors.map(cpuUsPerEvent)), 2)} × the relay's median`,
        `waiting for a CPU per ${fmt(options.durationMs / 1000)} s phase (median; main thread ready to run, not running): ` +
          `server ${waited(routes, (p) => p.targetRunqueueMs)} ms, relay ${waited(floors, (p) => p.targetRunqueueMs)} ms; ` +
          `load generator ${waited(routes, (p) => p.selfRunqueueMs)} ms with the server, ${waited(floors, (p) => p.selfRunqueueMs)} ms with the relay`,
        ...phaseNotes("relay", floors),
        ...phaseNotes("route", routes)
      ]
    })
    record({
      id: `stream.p50.${backend}`, name: "streamed turn: p50 latency per delta", backend, unit: "ms",
      floorName: "node:http SSE relay", compare: "added",
      runs: pairsOf(p50s(routes), p50s(floors), "added"),
      target: "(no target)", holds: () => undefined, notes: []
    })
    record({
      id: `stream.cpu.${backend}`, name: "streamed turn: CPU per delta delivered (server process)", backend, unit: "µs",
      floorName: "SSE relay's CPU per delta", compare: "ratio",
      runs: pairsOf(routes.map(cpuUsPerEvent), floors.map(cpuUsPerEvent), "ratio"),
      target: "<= 2 × floor", holds: (vs) => vs <= 2, notes: []
    })
    // What the stack costs before any of the route's own work (bench/stack-sse-relay.ts): informational.
    record({
      id: `stream.stack-cpu.${backend}`, name: "the SSE relay written on the server's stack (HttpApi endpoint, ChatRequest schema, Readable body): CPU per delta",
      backend, unit: "µs", floorName: "SSE relay's CPU per delta", compare: "ratio",
      runs: pairsOf(stacks.map(cpuUsPerEvent), floors.map(cpuUsPerEvent), "ratio"),
      target: "(no target)", holds: () => undefined, notes: phaseNotes("stack relay", stacks)
    })
    if (chatIdPeakMb === undefined) {
      record({
        id: `stream.memory.${backend}`, name: "server memory: peak RSS during the streamed turns", backend, unit: "MB",
        floorName: "—", compare: "none",
        runs: [{ figure: peak, floor: Number.NaN, vs: Number.NaN }],
        target: "(compared with chatid's when both run)", holds: () => undefined, notes: []
      })
    } else {
      record({
        id: `stream.memory.${backend}`, name: "server memory: peak RSS during the streamed turns", backend, unit: "MB",
        floorName: "the same server's peak through the chatid case", compare: "added",
        runs: [{ figure: peak, floor: chatIdPeakMb, vs: peak - chatIdPeakMb }],
        target: "<= floor + 20 MB", holds: (vs) => vs <= 20,
        notes: peakReset ? [] : ["could not start the peak RSS over (/proc/<pid>/clear_refs): the figure is the peak since the server started"]
      })
    }
  } finally {
    await Promise.all([floor.close(), stack.close(), route.close(), alone.close(), unstored.close()])
    await Promise.all([stop(relay.child), stop(stackRelay.child)])
  }
}

/** The one-INSERT proxy on the backend's database. */
const startInsertFloor = (upstreamPort: number, backend: "embedded" | "postgres", name: string) => {
  const env = cleanEnv()
  if (backend === "postgres") env["BENCH_DATABASE_URL"] = scratchUrl!
  else env["BENCH_DATA_DIR"] = join(workDir, `floor-pgdata-${name}`)
  return startHelper(`one-INSERT proxy (${backend})`, PROXY, [String(upstreamPort), "insert"], env)
}

const adminCall = (origin: string, method: string, path: string, body?: unknown) => apiCall(origin, ADMIN_TOKEN, method, path, body)

/**
 * Planner decision: 32 hosts (one per connection, one decision in flight
 * each), each on its own claimed task, through the whole path (host token,
 * active profile, decrypted key, provider call, step index, persisted
 * decision) vs the one-INSERT proxy. Left out (said so) when the build has no
 * planner route.
 */
const plannerCase = async (upstream: { child: ChildProcess; port: number }, server: ServerProcess, backend: "embedded" | "postgres") => {
  const origin = `http://127.0.0.1:${server.port}`
  const document = await (await fetch(`${origin}/openapi.json`)).text()
  if (!document.includes("/internal/planner/decision")) {
    machineNotes.push("planner decision: this build has no /internal/planner/decision route; the case is left out")
    console.log("\nplanner decision: not in this build (no /internal/planner/decision): left out")
    return
  }
  console.log(`\nplanner decision (${backend}) — ${options.concurrency} hosts, one decision in flight each, vs the one-INSERT proxy`)
  await activeProfile(origin, ADMIN_TOKEN, upstream.port, "bench-planner")
  const hosts = await readyHosts(origin, ADMIN_TOKEN, options.concurrency)
  const checkDecision = (status: number, text: string) =>
    status === 200 && (JSON.parse(text) as { toolName?: unknown }).toolName === "finish" ? undefined : `expected 200 { toolName: "finish" }`

  const proxy = await startInsertFloor(upstream.port, backend, "planner")
  const floor = await loadFor("one-INSERT proxy", { origin: `http://127.0.0.1:${proxy.port}`, path: "/v1/chat/completions", body: newChatBody }, checkCompletion)
  const route = await loadFor("planner decision", {
    origin,
    path: "/internal/planner/decision",
    body: (worker) => hosts[worker % hosts.length]!.body,
    headers: (worker) => ({ authorization: `Bearer ${hosts[worker % hosts.length]!.token}` })
  }, checkDecision)
  try {
    const { floors, routes } = await interleaved(upstream.child, [floor, proxy.child, "one-INSERT proxy"], [route, server.child, "planner decision"])
    record({
      id: `planner.throughput.${backend}`, name: "planner decision: throughput", backend, unit: "req/s",
      floorName: "one-INSERT proxy", compare: "ratio",
      runs: pairsOf(routes.map((p) => p.result.rps), floors.map((p) => p.result.rps), "ratio"),
      target: ">= 0.5 × floor", holds: (vs) => vs >= 0.5,
      notes: [...phaseNotes("floor", floors), ...phaseNotes("route", routes)]
    })
    record({
      id: `planner.p99.${backend}`, name: "planner decision: p99", backend, unit: "ms",
      floorName: "one-INSERT proxy", compare: "ratio",
      runs: pairsOf(routes.map((p) => p.result.p99), floors.map((p) => p.result.p99), "ratio"),
      target: "p99 <= 20 ms", holds: (_vs, figure) => figure <= 20, notes: []
    })
  } finally {
    await Promise.all([floor.close(), route.close()])
    await stop(proxy.child)
  }
}

/**
 * Retention sweep: `--decisions` planner decisions over 1,000 tasks, the
 * decisions of 100 of them (10 %) past the retention window; the server's
 * sweep (`POST /admin/planner-decisions/prune`: batches under SKIP LOCKED) vs
 * one plain `DELETE … WHERE` of the same rows, each on a freshly seeded table,
 * interleaved. Meanwhile the longest open transaction of a client on that
 * database is sampled every 20 ms: how long the sweep holds its row locks.
 * PostgreSQL only: the embedded database belongs to the server process, so the
 * bench cannot seed it.
 */
const retentionCase = async (server: ServerProcess, backend: "embedded" | "postgres") => {
  const origin = `http://127.0.0.1:${server.port}`
  const document = await (await fetch(`${origin}/openapi.json`)).text()
  if (!document.includes("/admin/planner-decisions/prune")) {
    machineNotes.push("retention sweep: this build has no /admin/planner-decisions/prune route; the case is left out")
    console.log("\nretention sweep: not in this build (no /admin/planner-decisions/prune): left out")
    return
  }
  if (backend === "embedded") {
    machineNotes.push("retention sweep: measured on PostgreSQL only (the embedded database belongs to the server process: the bench cannot seed it)")
    return
  }
  console.log(`\nretention sweep (${backend}) — ${options.decisions.toLocaleString("en-US")} decisions, 10 % prunable, vs a plain DELETE … WHERE`)
  const runtime = ManagedRuntime.make(PgClient.layer({ url: Redacted.make(scratchUrl!), maxConnections: 3 }))
  const sql = await runtime.runPromise(Effect.service(SqlClient.SqlClient))
  const exec = <A>(statement: Effect.Effect<A, unknown>) => runtime.runPromise(statement)
  const seed = async () => {
    await exec(sql`TRUNCATE planner_decisions`)
    await exec(sql`DELETE FROM tasks WHERE id LIKE 'bench_task_%'`)
    await exec(sql`
      INSERT INTO tasks (id, goal, status, attempt, created_at, terminal_at)
      SELECT 'bench_task_' || i, 'bench', CASE WHEN i < 100 THEN 'succeeded' ELSE 'queued' END, 1,
             now() - interval '40 days', CASE WHEN i < 100 THEN now() - interval '30 days' END
      FROM generate_series(0, 999) AS i`)
    await exec(sql`
      INSERT INTO planner_decisions (task_id, attempt, step_index, system_prompt, user_prompt, tool_name, arguments, created_at, task_terminal_at)
      SELECT 'bench_task_' || (i % 1000), 1, i / 1000, 'You carry out tasks.', 'Task: bench', 'finish', '{}'::jsonb,
             now() - interval '35 days', CASE WHEN i % 1000 < 100 THEN now() - interval '30 days' END
      FROM generate_series(0, ${options.decisions - 1}) AS i`)
    await exec(sql`VACUUM ANALYZE planner_decisions`)
  }
  /** Longest open transaction (s) of another client on this database, sampled until `done`. */
  const sampleLocks = (done: { value: boolean }) =>
    (async () => {
      let longest = 0
      while (!done.value) {
        const rows = await exec(sql<{ s: number | null }>`
          SELECT max(extract(epoch FROM clock_timestamp() - xact_start))::float8 AS s FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend' AND xact_start IS NOT NULL`)
        longest = Math.max(longest, Number(rows[0]?.s ?? 0))
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      return longest
    })()
  const prunable = Math.floor(options.decisions / 1000) * 100 + Math.min(100, options.decisions % 1000)
  const sweeps: Array<number> = []
  const deletes: Array<number> = []
  const locks: Array<number> = []
  try {
    for (let i = 0; i < options.runs; i++) {
      console.log(`  run ${i + 1}/${options.runs}`)
      await seed()
      let t0 = performance.now()
      const deleted = await exec(sql<{ n: number }>`
        WITH gone AS (
          DELETE FROM planner_decisions WHERE task_terminal_at IS NOT NULL AND task_terminal_at < now() - interval '7 days' RETURNING 1
        ) SELECT count(*)::int AS n FROM gone`)
      deletes.push(performance.now() - t0)
      if (deleted[0]?.n !== prunable) throw new Error(`plain DELETE removed ${deleted[0]?.n}, expected ${prunable}`)
      console.log(`    plain DELETE … WHERE: ${fmt(deletes[i]!)} ms (${prunable.toLocaleString("en-US")} rows)`)
      await seed()
      const done = { value: false }
      const sampler = sampleLocks(done)
      t0 = performance.now()
      const answer = await adminCall(origin, "POST", "/admin/planner-decisions/prune")
      sweeps.push(performance.now() - t0)
      done.value = true
      locks.push(await sampler)
      const left = await exec(sql<{ n: number }>`SELECT count(*)::int AS n FROM planner_decisions WHERE task_terminal_at IS NOT NULL`)
      if (left[0]?.n !== 0) throw new Error(`the sweep left ${left[0]?.n} prunable decisions`)
      console.log(`    server sweep: ${fmt(sweeps[i]!)} ms (answer ${JSON.stringify(answer)}), longest transaction seen ${fmt(locks[i]! * 1000)} ms`)
    }
  } finally {
    await exec(sql`TRUNCATE planner_decisions`).catch(() => undefined)
    await runtime.dispose()
  }
  record({
    id: "retention.time", name: `retention sweep of ${options.decisions.toLocaleString("en-US")} decisions (10 % prunable): time`, backend, unit: "ms",
    floorName: "plain DELETE … WHERE", compare: "ratio",
    runs: pairsOf(sweeps, deletes, "ratio"),
    target: "<= 1.5 × floor", holds: (vs) => vs <= 1.5, notes: []
  })
  record({
    id: "retention.lock", name: "retention sweep: longest transaction (row locks held)", backend, unit: "ms",
    floorName: "—", compare: "none",
    runs: locks.map((l) => ({ figure: l * 1000, floor: Number.NaN, vs: Number.NaN })),
    target: "<= 1000 ms", holds: (_vs, figure) => figure <= 1000, notes: []
  })
}

/** Peak RSS of the server under the chat-route load; on PGlite against PGlite's own footprint (the one-INSERT proxy). */
const memoryCase = (server: ServerProcess, backend: "embedded" | "postgres", pgliteAloneMb: number | undefined) => {
  const peak = peakRssMbOf(server.child.pid) ?? Number.NaN
  if (backend === "embedded") {
    const floor = pgliteAloneMb ?? Number.NaN
    record({
      id: "memory.embedded", name: "server memory: peak RSS under the chat-route load", backend, unit: "MB",
      floorName: "PGlite alone (the one-INSERT proxy, same load)", compare: "added",
      runs: [{ figure: peak, floor, vs: peak - floor }],
      target: "<= floor + 100 MB", holds: (vs) => vs <= 100, notes: []
    })
  } else {
    record({
      id: "memory.postgres", name: "server memory: peak RSS under the chat-route load", backend, unit: "MB",
      floorName: "—", compare: "none",
      runs: [{ figure: peak, floor: Number.NaN, vs: Number.NaN }],
      target: "<= 200 MB", holds: (_vs, figure) => figure <= 200, notes: []
    })
  }
}

/** The console's first paint in headless Chromium, fresh contexts (docs/console.md). */
const consoleCase = async (server: ServerProcess) => {
  const loads = options.quick ? 5 : 15
  const firstLoad = firstLoadOf()
  console.log(`\nthe console: the chat's first paint in headless Chromium, ${loads} loads in fresh contexts (first-load JavaScript ${fmt(firstLoad.gzipBytes / 1024, 1)} KB gzipped)`)
  const results = await consoleLoads(`http://127.0.0.1:${server.port}/`, loads)
  const paints = results.map((r) => r.firstPaintMs)
  const ready = results.map((r) => r.chatReadyMs)
  console.log(`  first paint: median ${fmt(median(paints), 0)} ms, max ${fmt(Math.max(...paints), 0)} ms; composer in the page: median ${fmt(median(ready), 0)} ms`)
  record({
    id: "console.firstPaint", name: "console: the chat's first paint (headless Chromium, fresh context)", backend: "embedded", unit: "ms",
    floorName: "—", compare: "none",
    runs: [{ figure: median(paints), floor: Number.NaN, vs: Number.NaN }],
    target: "<= 1000 ms", holds: (_vs, figure) => figure <= 1000,
    notes: [`${loads} loads; max ${fmt(Math.max(...paints), 0)} ms; the composer in the page at a median ${fmt(median(ready), 0)} ms; first-load JavaScript ${fmt(firstLoad.gzipBytes / 1024, 1)} KB gzipped (target 250 KB)`]
  })
}

/** The promise API's loop vs a hand-written fetch loop: CPU per step. */
const orchestratorCase = async (upstream: { child: ChildProcess; port: number }) => {
  console.log(`\norchestrator loop: 3 tool rounds + answer, ${options.conversations} conversations one at a time — vs a hand-written fetch loop`)
  const child = await startHelper(
    "orchestrator",
    ORCHESTRATOR,
    [String(upstream.port), String(options.conversations), String(options.warmupConversations), String(options.runs)],
    process.env,
    options.cpuProfDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${options.cpuProfDir}`, "--cpu-prof-name=orchestrator.cpuprofile"]
  )
  try {
    const message = await ask<{ runs: Array<{ floorUsPerStep: number; caseUsPerStep: number; floorMs: number; caseMs: number }> }>(
      child.child, { type: "start" }, "result", 600_000
    )
    for (const [i, r] of message.runs.entries()) {
      console.log(
        `  run ${i + 1}/${message.runs.length}: fetch loop ${fmt(r.floorUsPerStep)} µs/step (${fmt(r.floorMs)} ms), ` +
          `run() ${fmt(r.caseUsPerStep)} µs/step (${fmt(r.caseMs)} ms)`
      )
    }
    record({
      id: "orchestrator.cpu", name: "orchestrator loop (`run()`): CPU per step", backend: "—", unit: "µs",
      floorName: "hand-written fetch loop", compare: "added",
      runs: pairsOf(message.runs.map((r) => r.caseUsPerStep), message.runs.map((r) => r.floorUsPerStep), "added"),
      target: "<= floor + 150 µs", holds: (vs) => vs <= 150, notes: []
    })
  } finally {
    await stop(child.child)
  }
}

/** Job dispatch → steer delivered (`bench/jobs.ts`), on a server of its own with the scripted instant sub-agent. */
const jobsRunCase = async (upstream: { readonly port: number }, backend: "embedded" | "postgres") => {
  const server = await startServer({
    name: `jobs server (${backend})`,
    upstreamPort: upstream.port,
    databaseUrl: backend === "postgres" ? scratchUrl : undefined,
    cpuProfDir: options.cpuProfDir,
    env: { LLM_PROVIDER: "scripted", LLM_SCRIPT: here("./jobs-script.json"), ...options.serverEnv }
  })
  try {
    // One warm-up run first, discarded, as every other case's warm-up phase: the first run of a fresh
    // server measures its JIT compiling the job path (its p99 ack is many times a warm run's).
    const warmUp = await jobsCase(server.port, { thinkMs: options.thinkMs })
    console.log(`jobs (${backend}) warm-up (not counted): ack p99 ${fmt(warmUp.ackP99Ms, 2)} ms, lost ${warmUp.lost}, duplicated ${warmUp.duplicated}`)
    const runs: Array<JobsFigures> = []
    for (let i = 0; i < options.runs; i++) {
      runs.push(await jobsCase(server.port, { thinkMs: options.thinkMs, ...(server.child.pid === undefined ? {} : { serverPid: server.child.pid }) }))
    }
    for (const r of runs) {
      console.log(
        `jobs (${backend}): ${r.jobs} jobs in ${fmt(r.seconds, 1)} s: ack p50 ${fmt(r.ackP50Ms, 2)} ms p99 ${fmt(r.ackP99Ms, 2)} ms, ` +
          `completion → steer p50 ${fmt(r.steerP50Ms, 2)} ms p99 ${fmt(r.steerP99Ms, 2)} ms, ` +
          `lost ${r.lost}, duplicated ${r.duplicated}, 409 retries ${r.retries409} (ack p99 with them ${fmt(r.ackWithRetriesP99Ms, 2)} ms), ` +
          `server CPU ${fmt(r.serverCpuMsPerJob, 2)} ms/job, think ${options.thinkMs} ms`
      )
    }
    const pacing = options.thinkMs > 0 ? `think time ${options.thinkMs} ms (½–1½×) between a chat's turns` : "turns back-to-back"
    const none = (figure: (r: JobsFigures) => number) => runs.map((r) => ({ figure: figure(r), floor: Number.NaN, vs: Number.NaN }))
    record({
      id: "jobs.ack", name: "job dispatch: p99 ack (the dispatching turn, 200 jobs over 20 chats)", backend, unit: "ms",
      floorName: "—", compare: "none", runs: none((r) => r.ackP99Ms),
      target: "<= 10 ms", holds: (_vs, figure) => figure <= 10, notes: [pacing]
    })
    record({
      id: "jobs.steer", name: "job completion → steer in transcript: p99", backend, unit: "ms",
      floorName: "—", compare: "none", runs: none((r) => r.steerP99Ms),
      target: "<= 250 ms", holds: (_vs, figure) => figure <= 250, notes: [pacing]
    })
    record({
      id: "jobs.exactly-once", name: "jobs lost + steers duplicated (every run, the warm-up's too)", backend, unit: "",
      floorName: "—", compare: "none", aggregate: "sum",
      runs: [warmUp, ...runs].map((r) => ({ figure: r.lost + r.duplicated, floor: Number.NaN, vs: Number.NaN })),
      target: "0", holds: (_vs, figure) => figure === 0, notes: []
    })
    const errors = errorLines(server.logFile)
    if (errors.length > 0) machineNotes.push(`jobs server (${backend}) logged ${errors.length} errors, first: ${errors[0]!.slice(0, 300)}`)
  } finally {
    await stop(server.child)
  }
}

/**
 * A user's JWT against the product's own backend token (docs/performance.md, "JWT per turn"): one
 * server with both `AUTH_JWKS_URL` (the ES256 JWKS of `examples/product-backend.ts`, served by this
 * process) and `CHAT_TOKEN`; the same turn sent by the same 32 users (one a connection), as
 * `Authorization: Bearer <the user's JWT>` or as `Bearer $CHAT_TOKEN` + `X-Switchboard-User`. One
 * server for both, so that the process, its database and its JIT are the same and the only
 * difference is how a request's user is known; its CHAT_TOKEN path is a CHAT_TOKEN-only server's
 * (the token is compared first; the JWT verifier never runs).
 *
 * The difference sought (tens of µs) is a few % of a persisted turn's CPU, less than this machine's
 * drift over a minute: so the two alternate in short phases, in ABBA order (JWT, token, token,
 * JWT, …: what one phase leaves to the next, its garbage say, falls on both alike), `USERS_PAIRS`
 * pairs after a warm-up of each, and the figure is the median of the pairs' differences. The
 * persisted turn (a new chatId each, the target's) comes first, then the same turn without a
 * chatId (nothing stored: a smaller turn, so the same difference stands out of less noise).
 */
const USERS_PAIRS = { quick: 6, full: 12 }

const usersCase = async (upstream: { readonly child: ChildProcess; readonly port: number }, backend: "embedded" | "postgres") => {
  const pairs = options.quick ? USERS_PAIRS.quick : USERS_PAIRS.full
  const phaseMs = Math.max(1_000, options.durationMs / 5)
  console.log(
    `\nusers (${backend}): a turn with a user's JWT (ES256, local JWKS) vs the same turn with CHAT_TOKEN + X-Switchboard-User, ` +
      `one server; ${pairs} pairs of ${fmt(phaseMs / 1000, 1)} s phases, ABBA`
  )
  const auth = await startUsersAuth(options.concurrency)
  let server: ServerProcess | undefined
  const loads: Array<LoadGenerator> = []
  try {
    server = await startServer({
      name: `users server (${backend})`,
      upstreamPort: upstream.port,
      databaseUrl: backend === "postgres" ? scratchUrl : undefined,
      cpuProfDir: options.cpuProfDir,
      env: { ...auth.env, ...options.serverEnv }
    })
    const target = server
    const origin = `http://127.0.0.1:${target.port}`
    const verifyUs = await auth.verifyCpuUs()
    const cpu = (p: Phase) => p.cpuUsPerRequest ?? Number.NaN

    const measure = async (label: string, body: () => string) => {
      const token = await loadFor(`${label} with CHAT_TOKEN`, { origin, path: "/api/agent/chat", body, headers: auth.chatTokenHeaders }, checkChatAnswer)
      loads.push(token)
      const jwt = await loadFor(`${label} with a JWT`, { origin, path: "/api/agent/chat", body, headers: auth.jwtHeaders }, checkChatAnswer)
      loads.push(jwt)
      await phase(token, target.child, upstream.child, options.warmupMs)
      await phase(jwt, target.child, upstream.child, options.warmupMs)
      const tokens: Array<Phase> = []
      const jwts: Array<Phase> = []
      for (let i = 0; i < pairs; i++) {
        const order = i % 2 === 0 ? [jwt, token] : [token, jwt]
        for (const load of order) {
          const p = await phase(load, target.child, upstream.child, phaseMs)
          ;(load === jwt ? jwts : tokens).push(p)
        }
        console.log(
          `    ${label}, pair ${i + 1}/${pairs}: CHAT_TOKEN ${fmt(cpu(tokens[i]!))} µs CPU/turn (${fmt(tokens[i]!.result.rps)} req/s), ` +
            `JWT ${fmt(cpu(jwts[i]!))} µs (${fmt(jwts[i]!.result.rps)} req/s): ${fmt(cpu(jwts[i]!) - cpu(tokens[i]!))} µs`
        )
      }
      return { tokens, jwts }
    }

    const summary = (label: string, entry: CaseRecord) =>
      console.log(
        `  ${label} (${backend}): CHAT_TOKEN ${fmt(entry.floor)} µs CPU/turn, JWT ${fmt(entry.figure)} µs CPU/turn, ` +
          `difference ${entry.vs >= 0 ? "+" : ""}${fmt(entry.vs)} µs (median of ${pairs} pairs; target <= +50 µs: ` +
          `${entry.holds === true ? "holds" : "does NOT hold"}); jose's jwtVerify alone ${fmt(verifyUs)} µs`
      )
    const notes = (tokens: ReadonlyArray<Phase>, jwts: ReadonlyArray<Phase>) => [
      `pairs (JWT − CHAT_TOKEN, µs): ${jwts.map((p, i) => fmt(cpu(p) - cpu(tokens[i]!))).join(", ")}`,
      `jose's jwtVerify of one such token alone, in the bench process (local key set, no HTTP): ${fmt(verifyUs)} µs of CPU`,
      ...phaseNotes("CHAT_TOKEN", tokens),
      ...phaseNotes("JWT", jwts)
    ]

    const stored = await measure("persisted turn", newChatBody)
    const persisted = record({
      id: `users.jwt-cpu.${backend}`, name: "persisted turn (new chatId) with a user's JWT (ES256, JWKS): server CPU per turn", backend, unit: "µs",
      floorName: "the same turn with CHAT_TOKEN + X-Switchboard-User, same server", compare: "added",
      runs: pairsOf(stored.jwts.map(cpu), stored.tokens.map(cpu), "added"),
      target: "<= floor + 50 µs", holds: (vs) => vs <= 50, notes: notes(stored.tokens, stored.jwts)
    })
    record({
      id: `users.jwt-throughput.${backend}`, name: "persisted turn with a user's JWT: throughput", backend, unit: "req/s",
      floorName: "the same turn with CHAT_TOKEN, same server", compare: "ratio",
      runs: pairsOf(stored.jwts.map((p) => p.result.rps), stored.tokens.map((p) => p.result.rps), "ratio"),
      target: "(no target)", holds: () => undefined, notes: []
    })
    summary("persisted turn", persisted)

    // Nothing stored: the same on either database, so measured with the first one only.
    if (backend !== backends[0]) return
    const bare = await measure("turn without chatId", () => CHAT_BODY)
    const unstored = record({
      id: `users.jwt-cpu-nochat.${backend}`, name: "turn without chatId with a user's JWT (ES256, JWKS): server CPU per turn", backend, unit: "µs",
      floorName: "the same turn with CHAT_TOKEN + X-Switchboard-User, same server", compare: "added",
      runs: pairsOf(bare.jwts.map(cpu), bare.tokens.map(cpu), "added"),
      target: "<= floor + 50 µs", holds: (vs) => vs <= 50, notes: notes(bare.tokens, bare.jwts)
    })
    summary("turn without chatId", unstored)
  } finally {
    if (server !== undefined) {
      const errors = errorLines(server.logFile)
      if (errors.length > 0) machineNotes.push(`users server (${backend}) logged ${errors.length} errors, first: ${errors[0]!.slice(0, 300)}`)
    }
    await Promise.all(loads.map((load) => load.close()))
    if (server !== undefined) await stop(server.child)
    await auth.close()
  }
}

// ---------------------------------------------------------------------------
// The table

const cell = (n: number, unit: string) => (Number.isFinite(n) ? `${fmt(n, unit === "ms" ? 2 : 0)} ${unit}` : "—")

const table = () => {
  const header = ["case", "backend", "figure", "floor (same run)", `vs floor (median of ${options.runs})`, "target", "holds"]
  const rows = records.map((r) => [
    r.name,
    r.backend,
    cell(r.figure, r.unit),
    r.compare === "none" ? "—" : `${cell(r.floor, r.unit)} (${r.floorName})`,
    r.compare === "ratio" ? `${fmt(r.vs, 2)} ×` : r.compare === "added" ? `${r.vs >= 0 ? "+" : ""}${cell(r.vs, r.unit)}` : "—",
    r.target,
    r.holds === undefined ? "—" : r.holds ? "yes" : "**no**"
  ])
  return [header, header.map(() => "---"), ...rows].map((cells) => `| ${cells.join(" | ")} |`).join("\n")
}

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
      const sizes = quick ? { hosts: 100, jobs: 100, turns: 100 } : { hosts: 1000, jobs: 1000, turns: 500 }
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
  const output = table()
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
