/**
 * `npm run bench`: throughput and latency of the chat route against a
 * pass-through proxy, on one machine, over loopback. Figures only, no
 * assertions.
 *
 * Processes (each its own event loop):
 *   - this process: the load generator (undici Pool, `--concurrency` connections and in-flight requests);
 *   - `bench/upstream.ts`: the OpenAI-compatible upstream, answering at once with a fixed completion;
 *   - the system under test, one at a time: `bench/proxy.ts` (the baseline), or the real server
 *     (`packages/server/src/main.ts`, embedded PGlite in a temp `DATA_DIR`, its log written to a file).
 *
 * Targets, in order:
 *   1. pass-through proxy, node:http keep-alive Agent   (the reference for the ratios)
 *   2. pass-through proxy, undici Pool                   (same client as the route's default transport)
 *   3. chat route, LLM_TRANSPORT=undici, no chatId       (no database write)
 *   4. chat route, LLM_TRANSPORT=undici, a distinct chatId per request (write-ahead turn on PGlite)
 *   5. chat route, LLM_TRANSPORT=sdk, no chatId
 *   6. chat route, LLM_TRANSPORT=undici, LOG_LEVEL=warn, so no line per request (skip with --no-quiet)
 *
 * Options (flag or environment variable):
 *   --duration=3            BENCH_DURATION            measured phase, seconds (or --requests, whichever first)
 *   --requests=20000        BENCH_REQUESTS            measured phase, request cap
 *   --warmup=4              BENCH_WARMUP              warm-up phase, seconds (capped at 20000 requests): the JIT needs it
 *   --concurrency=32        BENCH_CONCURRENCY         connections = in-flight requests
 *   --persisted-requests=2000  BENCH_PERSISTED_REQUESTS  request cap of the chatId target
 *   --no-quiet              BENCH_NO_QUIET=1          skip target 6
 *   --cpu-prof=DIR          BENCH_CPU_PROF=DIR        write a V8 CPU profile of each server process to DIR
 *
 *   npm run bench -- --duration=5 --concurrency=64
 */
import { execFileSync, fork, spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import type { AddressInfo } from "node:net"
import { availableParallelism, tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { LoadGenerator } from "./load.ts"
import type { PhaseResult, Target } from "./load.ts"

// ---------------------------------------------------------------------------
// Options

const { values: flags } = parseArgs({
  options: {
    duration: { type: "string" },
    requests: { type: "string" },
    warmup: { type: "string" },
    concurrency: { type: "string" },
    "persisted-requests": { type: "string" },
    "no-quiet": { type: "boolean" },
    "cpu-prof": { type: "string" },
    help: { type: "boolean", short: "h" }
  },
  strict: true
})

if (flags.help === true) {
  console.log("usage: npm run bench -- [--duration=s] [--requests=n] [--warmup=s] [--concurrency=n] [--persisted-requests=n] [--no-quiet] [--cpu-prof=DIR]")
  process.exit(0)
}

const numberOption = (flag: string | undefined, env: string, fallback: number, integer: boolean): number => {
  const raw = flag ?? process.env[env]
  if (raw === undefined || raw === "") return fallback
  const n = Number(raw)
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    console.error(`invalid ${env} / flag value ${JSON.stringify(raw)}: expected a positive ${integer ? "integer" : "number"}`)
    process.exit(2)
  }
  return n
}

const options = {
  durationMs: numberOption(flags.duration, "BENCH_DURATION", 3, false) * 1000,
  requests: numberOption(flags.requests, "BENCH_REQUESTS", 20_000, true),
  warmupMs: numberOption(flags.warmup, "BENCH_WARMUP", 4, false) * 1000,
  warmupRequests: 20_000,
  concurrency: numberOption(flags.concurrency, "BENCH_CONCURRENCY", 32, true),
  persistedRequests: numberOption(flags["persisted-requests"], "BENCH_PERSISTED_REQUESTS", 2_000, true),
  quiet: !(flags["no-quiet"] === true || process.env["BENCH_NO_QUIET"] === "1"),
  cpuProfDir: flags["cpu-prof"] ?? (process.env["BENCH_CPU_PROF"] || undefined)
}

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))
const ROOT = here("../")
const SERVER_MAIN = here("../packages/server/src/main.ts")
const UPSTREAM = here("./upstream.ts")
const PROXY = here("./proxy.ts")

// ---------------------------------------------------------------------------
// Child processes: every one is tracked and killed on the way out

const workDir = mkdtempSync(join(tmpdir(), "switchboard-bench-"))
const children = new Set<ChildProcess>()

/** Tracks a child; its errors (a failed send, a failed kill) surface where it is used, never as a crash. */
const track = (child: ChildProcess) => {
  children.add(child)
  child.on("error", () => {})
  return child
}

const alive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null

const exited = (child: ChildProcess, timeoutMs: number) =>
  new Promise<boolean>((resolve) => {
    if (!alive(child)) return resolve(true)
    const timer = setTimeout(() => resolve(false), timeoutMs)
    child.once("exit", () => {
      clearTimeout(timer)
      resolve(true)
    })
  })

const stop = async (child: ChildProcess) => {
  if (alive(child)) {
    child.kill("SIGTERM")
    if (!(await exited(child, 10_000))) {
      child.kill("SIGKILL")
      await exited(child, 2_000)
    }
  }
  children.delete(child)
}

const stopAll = () => Promise.all([...children].map(stop))

process.on("exit", () => {
  for (const child of children) if (alive(child)) child.kill("SIGKILL")
  rmSync(workDir, { recursive: true, force: true })
})

let shuttingDown = false
const shutdown = async (code: number) => {
  if (shuttingDown) return
  shuttingDown = true
  await stopAll()
  process.exit(code)
}
process.on("SIGINT", () => {
  console.error("\ninterrupted: stopping child processes")
  void shutdown(130)
})
process.on("SIGTERM", () => void shutdown(143))

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** A forked helper (`upstream.ts`, `proxy.ts`) that reports `{ type: "ready", port }` over IPC. */
const startHelper = (name: string, file: string, args: ReadonlyArray<string>) =>
  new Promise<{ child: ChildProcess; port: number }>((resolve, reject) => {
    const child = track(fork(file, [...args], { execPath: process.execPath, stdio: ["ignore", "inherit", "inherit", "ipc"] }))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`${name} did not start within 15 s`))
    }, 15_000)
    child.on("message", (message: unknown) => {
      const m = message as { type?: unknown; port?: unknown } | null
      if (m?.type === "ready" && typeof m.port === "number") {
        clearTimeout(timer)
        resolve({ child, port: m.port })
      }
    })
    child.once("exit", (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`${name} exited (${signal ?? code}) before it was ready`))
    })
  })

/** Chat requests the upstream has served and connections it has accepted, so far. */
const upstreamCount = (upstream: ChildProcess) =>
  new Promise<{ readonly requests: number; readonly connections: number }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("upstream did not answer the count")), 5_000)
    const onMessage = (message: unknown) => {
      const m = message as { type?: unknown; count?: unknown; connections?: unknown } | null
      if (m?.type === "count" && typeof m.count === "number" && typeof m.connections === "number") {
        clearTimeout(timer)
        upstream.off("message", onMessage)
        resolve({ requests: m.count, connections: m.connections })
      }
    }
    if (!upstream.connected) {
      clearTimeout(timer)
      return reject(new Error("the upstream is gone"))
    }
    upstream.on("message", onMessage)
    upstream.send({ type: "count" }, (error) => {
      if (error === null) return
      clearTimeout(timer)
      upstream.off("message", onMessage)
      reject(error)
    })
  })

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer()
    probe.on("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })

const tail = (file: string, lines: number) => {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n")
  } catch {
    return "(no log)"
  }
}

/** Variables the benchmark sets itself: never inherited from the caller's shell (a DATABASE_URL would leave PGlite). */
const OWN_VARIABLES = /^(LLM_.*|DATABASE_URL|CHAT_TOKEN|HOST|PORT|DATA_DIR|LOG_FORMAT)$/

interface ServerProcess {
  readonly child: ChildProcess
  readonly port: number
  readonly logFile: string
}

let serverCount = 0

/** The real server in its own process, answering `/healthz`. */
const startServer = async (
  name: string,
  logLevel: "info" | "warn",
  transport: "undici" | "sdk",
  upstreamPort: number
): Promise<ServerProcess> => {
  const n = ++serverCount
  const port = await freePort()
  const logFile = join(workDir, `server-${n}-${transport}.log`)
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) if (!OWN_VARIABLES.test(key)) env[key] = value
  Object.assign(env, {
    LLM_PROVIDER: "openai-compatible",
    LLM_MODEL: "bench",
    LLM_API_KEY: "bench",
    LLM_BASE_URL: `http://127.0.0.1:${upstreamPort}/v1`,
    LLM_TRANSPORT: transport,
    PORT: String(port),
    DATA_DIR: join(workDir, `data-${n}`),
    LOG_FORMAT: "json",
    LOG_LEVEL: logLevel
  })
  // Log to a file, as a deployed server would: no pipe back into the load generator's event loop.
  const fd = openSync(logFile, "a")
  const profile = options.cpuProfDir === undefined
    ? []
    : ["--cpu-prof", `--cpu-prof-dir=${resolve(options.cpuProfDir)}`, `--cpu-prof-name=server-${n}-${transport}.cpuprofile`]
  const child = track(spawn(process.execPath, [...profile, SERVER_MAIN], { cwd: ROOT, env, stdio: ["ignore", fd, fd] }))
  closeSync(fd)

  const started = Date.now()
  while (Date.now() - started < 60_000) {
    if (!alive(child)) {
      children.delete(child)
      throw new Error(`${name}: the server exited (${child.signalCode ?? child.exitCode}) before answering:\n${tail(logFile, 20)}`)
    }
    try {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(1_000) })
      await response.arrayBuffer()
      if (response.ok) return { child, port, logFile }
    } catch {
      // not listening yet
    }
    await sleep(100)
  }
  await stop(child)
  throw new Error(`${name}: no answer on /healthz within 60 s:\n${tail(logFile, 20)}`)
}

// ---------------------------------------------------------------------------
// CPU time of each process during the measured phase (Linux /proc; "n/a" elsewhere)

const CLK_TCK = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100
  } catch {
    return 100
  }
})()

/** utime + stime of a process, in ms. */
const cpuMsOf = (pid: number | undefined): number | undefined => {
  if (pid === undefined) return undefined
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK
  } catch {
    return undefined
  }
}

/** Busy time of the whole machine (all cores, every process and the kernel), in ms. */
const machineBusyMs = (): number | undefined => {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? ""
    // cpu  user nice system idle iowait irq softirq steal ...
    const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number)
    const busy = ticks.reduce((a, b) => a + b, 0) - (ticks[3] ?? 0) - (ticks[4] ?? 0)
    return (busy * 1000) / CLK_TCK
  } catch {
    return undefined
  }
}

const selfCpuMs = () => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1000
}

// ---------------------------------------------------------------------------
// Measuring one target

interface Measurement {
  readonly name: string
  readonly result: PhaseResult
  /** % of one core during the measured phase. */
  readonly cpu: {
    readonly loadgen: number
    readonly system: number | undefined
    readonly upstream: number | undefined
    /** Everything else the machine did: kernel time not charged to a process (loopback networking), other processes. */
    readonly rest: number | undefined
  }
  /** Requests the upstream served per successful measured request. */
  readonly upstreamPerRequest: number
  readonly notes: ReadonlyArray<string>
}

const measurements: Array<Measurement> = []
const failures: Array<string> = []

const f0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "n/a")
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : "n/a")
const pct = (n: number | undefined) => (n === undefined ? "n/a" : `${Math.round(n)}%`)

/** CPU (% of one core) outside the benchmark's processes above which a figure is flagged as disturbed. */
const BUSY_REST = 25

const countLines = (file: string) => {
  const data = readFileSync(file)
  let lines = 0
  for (let i = data.indexOf(10); i !== -1; i = data.indexOf(10, i + 1)) lines++
  return { lines, bytes: data.length }
}

const measure = async (spec: {
  readonly name: string
  readonly target: Target
  readonly check: (status: number, text: string) => string | undefined
  readonly system: ChildProcess
  readonly upstream: ChildProcess
  readonly maxRequests: number
  readonly warmupRequests: number
  readonly logFile?: string
}): Promise<Measurement> => {
  const load = new LoadGenerator(spec.target, options.concurrency)
  try {
    const smoke = await load.once()
    const problem = spec.check(smoke.status, smoke.text)
    if (problem !== undefined) throw new Error(`${spec.name}: smoke request failed: ${problem} (HTTP ${smoke.status}: ${smoke.text.slice(0, 300)})`)

    await load.run({ durationMs: options.warmupMs, maxRequests: spec.warmupRequests })

    const logBefore = spec.logFile === undefined ? undefined : countLines(spec.logFile)
    const upstreamBefore = await upstreamCount(spec.upstream)
    const cpuBefore = {
      loadgen: selfCpuMs(),
      system: cpuMsOf(spec.system.pid),
      upstream: cpuMsOf(spec.upstream.pid),
      machine: machineBusyMs()
    }
    const result = await load.run({ durationMs: options.durationMs, maxRequests: spec.maxRequests })
    const cpuAfter = {
      loadgen: selfCpuMs(),
      system: cpuMsOf(spec.system.pid),
      upstream: cpuMsOf(spec.upstream.pid),
      machine: machineBusyMs()
    }
    const upstreamAfter = await upstreamCount(spec.upstream)

    const share = (before: number | undefined, after: number | undefined) =>
      before === undefined || after === undefined ? undefined : ((after - before) / result.elapsedMs) * 100
    const loadgen = ((cpuAfter.loadgen - cpuBefore.loadgen) / result.elapsedMs) * 100
    const system = share(cpuBefore.system, cpuAfter.system)
    const upstream = share(cpuBefore.upstream, cpuAfter.upstream)
    const machine = share(cpuBefore.machine, cpuAfter.machine)
    const rest = machine === undefined || system === undefined || upstream === undefined
      ? undefined
      : Math.max(0, machine - loadgen - system - upstream)
    const notes: Array<string> = []
    if (spec.logFile !== undefined && logBefore !== undefined) {
      const logAfter = countLines(spec.logFile)
      const requests = result.ok + result.errors
      notes.push(
        `server log: ${f2((logAfter.lines - logBefore.lines) / requests)} lines, ` +
          `${f0((logAfter.bytes - logBefore.bytes) / requests)} bytes per request`
      )
    }
    const opened = upstreamAfter.connections - upstreamBefore.connections
    if (opened > 0) notes.push(`${opened} new upstream connections during the measured phase (a warm pool opens none)`)
    for (const sample of result.errorSamples) notes.push(`error: ${sample}`)
    if (rest !== undefined && rest > BUSY_REST) {
      notes.push(`the machine was busy with other work (${pct(rest)} of a core outside the three processes): figures are noisy`)
    }

    const measurement: Measurement = {
      name: spec.name,
      result,
      cpu: { loadgen, system, upstream, rest },
      upstreamPerRequest: result.ok === 0
        ? Number.NaN
        : (upstreamAfter.requests - upstreamBefore.requests) / (result.ok + result.errors),
      notes
    }
    measurements.push(measurement)
    console.log(
      `  ${spec.name}: ${f0(result.rps)} req/s, p50 ${f2(result.p50)} ms, p99 ${f2(result.p99)} ms, ` +
        `${result.errors} errors, ${result.ok + result.errors} requests in ${f2(result.elapsedMs / 1000)} s`
    )
    for (const note of notes) console.log(`    ${note}`)
    return measurement
  } finally {
    await load.close()
  }
}

// Checks of the smoke request: the answer must be the upstream's "ok", passed through or as the route's answer.
const checkCompletion = (status: number, text: string) => {
  if (status !== 200) return "expected 200"
  const body = JSON.parse(text) as { choices?: Array<{ message?: { content?: unknown } }> }
  return body.choices?.[0]?.message?.content === "ok" ? undefined : `expected the completion with content "ok"`
}
const checkChatAnswer = (status: number, text: string) => {
  if (status !== 200) return "expected 200"
  const body = JSON.parse(text) as { content?: unknown; messageId?: unknown }
  return body.content === "ok" && typeof body.messageId === "string" ? undefined : `expected { content: "ok", messageId }`
}

// ---------------------------------------------------------------------------
// The run

const COMPLETION_BODY = JSON.stringify({ model: "bench", messages: [{ role: "user", content: "hello" }] })
const CHAT_BODY = JSON.stringify({ messages: [{ id: "u1", role: "user", content: "hello", timestamp: 1 }] })
const runId = Date.now().toString(36)
let chatSeq = 0
const persistedChatBody = () =>
  JSON.stringify({ chatId: `bench-${runId}-${++chatSeq}`, messages: [{ id: "u1", role: "user", content: "hello", timestamp: 1 }] })

const main = async () => {
  const began = Date.now()
  console.log(`Switchboard chat route benchmark (Node ${process.version}, ${availableParallelism()} cores)`)
  console.log(
    `Processes: load generator = this process (undici Pool, ${options.concurrency} connections, ` +
      `${options.concurrency} in flight); upstream = its own process (node:http, fixed completion); ` +
      `system under test = its own process, one at a time. 3 busy processes share ${availableParallelism()} cores, unpinned; ` +
      `the chat route's embedded database (PGlite, WASM) runs inside the server process.`
  )
  console.log(
    `Phases per target: smoke request, warm-up ${options.warmupMs / 1000} s (≤ ${options.warmupRequests} requests), ` +
      `measured ${options.durationMs / 1000} s or ${options.requests} requests, whichever first ` +
      `(chatId target: ≤ ${options.persistedRequests}). CPU = % of one core during the measured phase: load generator / ` +
      `system under test / upstream / rest (kernel networking and any other process on the machine).\n`
  )

  const upstream = await startHelper("upstream", UPSTREAM, [])
  console.log(`upstream listening on 127.0.0.1:${upstream.port}`)

  /** One failing target is reported and the run goes on with the next. */
  const attempt = async (name: string, run: () => Promise<void>) => {
    try {
      await run()
    } catch (error) {
      if (shuttingDown) throw error
      failures.push(name)
      console.log(`  ${name}: FAILED: ${error instanceof Error ? error.message : String(error)}`)
    }
  }

  for (const client of ["http", "undici"] as const) {
    const name = client === "http" ? "pass-through proxy (node:http Agent)" : "pass-through proxy (undici Pool)"
    await attempt(name, async () => {
      const proxy = await startHelper(name, PROXY, [String(upstream.port), client])
      try {
        await measure({
          name,
          target: { origin: `http://127.0.0.1:${proxy.port}`, path: "/v1/chat/completions", body: () => COMPLETION_BODY },
          check: checkCompletion,
          system: proxy.child,
          upstream: upstream.child,
          maxRequests: options.requests,
          warmupRequests: options.warmupRequests
        })
      } finally {
        await stop(proxy.child)
      }
    })
  }

  const route = (name: string, logLevel: "info" | "warn", transport: "undici" | "sdk", withPersisted: boolean) =>
    attempt(name, async () => {
      const server = await startServer(name, logLevel, transport, upstream.port)
      try {
        await measureRoute(name, server, withPersisted)
      } finally {
        await stop(server.child)
      }
    })

  const measureRoute = async (name: string, server: ServerProcess, withPersisted: boolean) => {
    const origin = `http://127.0.0.1:${server.port}`
    await measure({
      name,
      target: { origin, path: "/api/agent/chat", body: () => CHAT_BODY },
      check: checkChatAnswer,
      system: server.child,
      upstream: upstream.child,
      maxRequests: options.requests,
      warmupRequests: options.warmupRequests,
      logFile: server.logFile
    })
    if (withPersisted) {
      await measure({
        name: `${name}, distinct chatId per request (persisted turn)`,
        target: { origin, path: "/api/agent/chat", body: persistedChatBody },
        check: checkChatAnswer,
        system: server.child,
        upstream: upstream.child,
        maxRequests: options.persistedRequests,
        warmupRequests: Math.max(1, Math.floor(options.persistedRequests / 10)),
        logFile: server.logFile
      })
    }
    const errorLines = readFileSync(server.logFile, "utf8").split("\n").filter((line) => /"level":"(ERROR|FATAL)"/.test(line))
    if (errorLines.length > 0) console.log(`    server logged ${errorLines.length} errors, first: ${errorLines[0]!.slice(0, 300)}`)
  }

  await route("chat route (LLM_TRANSPORT=undici)", "info", "undici", true)
  await route("chat route (LLM_TRANSPORT=sdk)", "info", "sdk", false)
  if (options.quiet) await route("chat route (undici, LOG_LEVEL=warn: no request log)", "warn", "undici", false)

  await stop(upstream.child)

  // Summary
  const reference = measurements.find((m) => m.name.includes("node:http Agent"))
  const undiciProxy = measurements.find((m) => m.name.includes("proxy (undici Pool)"))
  const header = ["target", "req/s", "p50 ms", "p99 ms", "errors", "requests", "CPU gen/sut/up/rest", "vs proxy", "vs undici proxy"]
  const rows = measurements.map((m) => [
    m.name,
    f0(m.result.rps),
    f2(m.result.p50),
    f2(m.result.p99),
    String(m.result.errors),
    String(m.result.ok + m.result.errors),
    `${pct(m.cpu.loadgen)}/${pct(m.cpu.system)}/${pct(m.cpu.upstream)}/${pct(m.cpu.rest)}`,
    reference === undefined ? "n/a" : f2(m.result.rps / reference.result.rps),
    undiciProxy === undefined ? "n/a" : f2(m.result.rps / undiciProxy.result.rps)
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ")
  console.log(`\nSummary (concurrency ${options.concurrency}; "vs proxy" = req/s ÷ the node:http pass-through proxy's):`)
  console.log(line(header))
  for (const row of rows) console.log(line(row))
  const headline = measurements.find((m) => m.name === "chat route (LLM_TRANSPORT=undici)")
  if (headline !== undefined && reference !== undefined) {
    console.log(
      `\nchat route (undici, no chatId) ÷ pass-through proxy (node:http): ${f2(headline.result.rps / reference.result.rps)} ` +
        `(${f0(headline.result.rps)} ÷ ${f0(reference.result.rps)} req/s; the goal is ≥ 0.50)`
    )
  }
  const disturbed = measurements.filter((m) => m.cpu.rest !== undefined && m.cpu.rest > BUSY_REST)
  if (disturbed.length > 0) {
    console.log(`note: other work on the machine disturbed ${disturbed.length} of ${measurements.length} figures (rest > ${BUSY_REST}%): re-run on an idle machine`)
  }
  const unserved = measurements.filter((m) => Number.isFinite(m.upstreamPerRequest) && Math.abs(m.upstreamPerRequest - 1) > 0.01)
  for (const m of unserved) console.log(`note: ${m.name}: ${f2(m.upstreamPerRequest)} upstream requests per request`)
  if (failures.length > 0) console.log(`\nFAILED targets: ${failures.join("; ")}`)
  console.log(`\ntotal ${f2((Date.now() - began) / 1000)} s`)
}

main().then(
  () => shutdown(failures.length > 0 ? 1 : 0),
  (error: unknown) => {
    if (!shuttingDown) console.error(error instanceof Error ? error.message : error)
    return shutdown(1)
  }
)
