/**
 * The scale case (`npm run bench -- --only=scale`): N streamed, persisted
 * turns started at the same moment (`burst.ts`: a chat of its own each,
 * `Accept: text/event-stream`), against a provider fake that answers like a
 * model — 40 text deltas 150 ms apart, ~6 s a turn (`upstream.ts` with
 * `STREAM_DELTAS=40 STREAM_GAP_MS=150`) — at N = 500, 1000 and 2000, on three
 * targets in the same run: the bare node:http SSE relay (`sse-relay.ts`, the
 * floor), the server on the embedded database and, with DATABASE_URL, the
 * server on a scratch database of that PostgreSQL.
 *
 * Each target at each N is a fresh process (its peak RSS then says what N
 * turns cost, not what an earlier N left behind), warmed by one burst of
 * `WARMUP_TURNS` that is not counted; then its RSS, then the N turns at once.
 * The targets take turns at each N (relay, embedded, PostgreSQL), so the three
 * figures of one N come from the same minute of the machine.
 *
 * The server runs with its own defaults for what bounds turns:
 * `MAX_CONCURRENT_TURNS` and `CHAT_RPM` are unset, whatever the shell or
 * `--server-env` says.
 */
import type { ChildProcess } from "node:child_process"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { burst, firstDeltaP, gapP } from "./burst.ts"
import type { BurstResult } from "./burst.ts"
import { cpuMsOf, errorLines, listenOverflows, selfCpuMs, sleep, startHelper, startServer, stop, watchPeakRss } from "./processes.ts"
import { fmt as recordFmt } from "./record.ts"

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))

export const SCALE_NS = [500, 1000, 2000] as const
const DELTAS = 40
const GAP_MS = 150
/** Enough turns at once for the JIT to have compiled the streamed path before the measured burst. */
export const WARMUP_TURNS = 50
/** Five times a turn's length: a turn not done by then has failed its user, and the run moves on. */
export const DEADLINE_MS = 30_000
/** What the server must not be given: the case measures its defaults. */
const UNSET = ["MAX_CONCURRENT_TURNS", "CHAT_RPM"] as const
export const STREAM_HEADERS = { "content-type": "application/json", accept: "text/event-stream" }

export type ScaleTarget = "relay" | "embedded" | "postgres"

export interface ScaleSpec {
  readonly ns: ReadonlyArray<number>
  readonly backends: ReadonlyArray<"embedded" | "postgres">
  /** A fresh scratch database's URL (asked for once, when PostgreSQL is among the backends). */
  readonly scratchDatabase: () => Promise<string>
  /** A new chat's request body (its own chatId) for each call. */
  readonly chatBody: () => string
  readonly serverEnv: Readonly<Record<string, string>>
  readonly cpuProfDir: string | undefined
}

export interface ScaleRow {
  readonly n: number
  readonly target: ScaleTarget
  readonly complete: number
  readonly firstDeltaP50Ms: number
  readonly firstDeltaP99Ms: number
  readonly gapP99Ms: number
  readonly rssBeforeMb: number
  readonly rssPeakMb: number
  readonly rssGrowthMb: number
  /** The target process's CPU over the burst, ms. */
  readonly cpuMs: number
  /** This process's (the load generator's) CPU over the burst, ms. */
  readonly loadGeneratorCpuMs: number
  readonly elapsedMs: number
  readonly deltas: number
  /**
   * Connections turned away by a full accept queue during the burst (the machine's count; every
   * listener here asks for a queue as deep as the kernel allows).
   */
  readonly listenOverflows: number
  readonly warmupComplete: number
  readonly problems: Readonly<Record<string, number>>
  readonly problemSamples: ReadonlyArray<string>
}

export interface ScaleCheck {
  readonly n: number
  readonly target: ScaleTarget
  readonly what: string
  readonly pass: boolean
}

export interface ScaleResult {
  readonly rows: ReadonlyArray<ScaleRow>
  readonly checks: ReadonlyArray<ScaleCheck>
  readonly table: string
  /** What could not run (a target that failed to start, an N the open-files limit does not allow). */
  readonly failures: ReadonlyArray<string>
  readonly notes: ReadonlyArray<string>
}

const TARGET_NAMES: Record<ScaleTarget, string> = {
  relay: "node:http SSE relay",
  embedded: "Switchboard, embedded",
  postgres: "Switchboard, PostgreSQL"
}

/** The record's number format, and ∞ for a first-delta percentile that had no value. */
export const fmt = (n: number, digits = 0) => (n === Number.POSITIVE_INFINITY ? "∞" : recordFmt(n, digits))
/** A first-delta percentile: ∞ when too many turns had none (cut off or refused) for it to have a value. */
const ms = (n: number) => (n === Number.POSITIVE_INFINITY ? "none" : Number.isFinite(n) ? `${fmt(n)} ms` : "n/a")

// ---------------------------------------------------------------------------
// Open files

/** This process's limit on open files (`ulimit -n`; Node raises its soft limit to the hard one at start, children inherit it). */
const openFilesLimit = (): number | undefined => {
  try {
    const line = readFileSync("/proc/self/limits", "utf8").split("\n").find((l) => l.startsWith("Max open files"))
    const soft = line?.slice("Max open files".length).trim().split(/\s+/)[0]
    return soft === undefined ? undefined : soft === "unlimited" ? Number.POSITIVE_INFINITY : Number(soft)
  } catch {
    return undefined
  }
}

/**
 * Each stream holds a socket in the load generator, two in the server (its client's and its
 * provider's) and one in the provider fake; the server, at two, needs the most, besides its own files.
 */
const filesNeeded = (n: number) => 2 * n + 256

/** How deep the kernel lets an accept queue be (what the relay's and the fake's are). */
const somaxconn = () => {
  try {
    return readFileSync("/proc/sys/net/core/somaxconn", "utf8").trim()
  } catch {
    return "unknown"
  }
}

// ---------------------------------------------------------------------------
// One target at one N

interface Started {
  readonly child: ChildProcess
  readonly port: number
  readonly logFile?: string
}

const measure = async (
  target: ScaleTarget,
  n: number,
  started: Started,
  chatBody: () => string,
  log: (line: string) => void
): Promise<ScaleRow> => {
  const spec = (turns: number) => ({
    origin: `http://127.0.0.1:${started.port}`,
    path: "/api/agent/chat",
    turns,
    body: chatBody,
    headers: STREAM_HEADERS,
    deadlineMs: DEADLINE_MS
  })
  const warmup = await burst(spec(WARMUP_TURNS))
  // The warm-up's turns write their ends after their streams close; let them, before the RSS baseline.
  await sleep(500)
  const pid = started.child.pid
  const rss = watchPeakRss(pid)
  const before = { cpu: cpuMsOf(pid), self: selfCpuMs(), overflows: listenOverflows() }
  const result: BurstResult = await burst(spec(n))
  const after = { cpu: cpuMsOf(pid), self: selfCpuMs(), overflows: listenOverflows() }
  const peak = rss.stop()
  const row: ScaleRow = {
    n,
    target,
    complete: result.complete,
    firstDeltaP50Ms: firstDeltaP(result, 0.5),
    firstDeltaP99Ms: firstDeltaP(result, 0.99),
    gapP99Ms: gapP(result, 0.99),
    rssBeforeMb: rss.beforeMb,
    rssPeakMb: peak,
    rssGrowthMb: peak - rss.beforeMb,
    cpuMs: before.cpu === undefined || after.cpu === undefined ? Number.NaN : after.cpu - before.cpu,
    loadGeneratorCpuMs: after.self - before.self,
    elapsedMs: result.elapsedMs,
    deltas: result.deltas,
    listenOverflows: before.overflows === undefined || after.overflows === undefined ? Number.NaN : after.overflows - before.overflows,
    warmupComplete: warmup.complete,
    problems: result.problems,
    problemSamples: result.problemSamples
  }
  log(
    `  N=${n} ${TARGET_NAMES[target]}: ${row.complete} of ${n} complete, the last ended at ${fmt(row.elapsedMs / 1000, 1)} s; ` +
      `first delta p50 ${ms(row.firstDeltaP50Ms)} p99 ${ms(row.firstDeltaP99Ms)}; gap p99 ${ms(row.gapP99Ms)}; ` +
      `RSS ${fmt(row.rssBeforeMb)} → ${fmt(row.rssPeakMb)} MB (+${fmt(row.rssGrowthMb)}); ` +
      `CPU ${fmt(row.cpuMs / 1000, 1)} s (load generator ${fmt(row.loadGeneratorCpuMs / 1000, 1)} s)` +
      (row.listenOverflows > 0 ? `; ${fmt(row.listenOverflows)} connections turned away by a full accept queue (sent again 1 s later, then 3, 7 s)` : "") +
      (warmup.complete < WARMUP_TURNS ? `; warm-up ${warmup.complete} of ${WARMUP_TURNS} complete` : "") +
      (result.problemSamples.length === 0 ? "" : `; incomplete: ${JSON.stringify(result.problems)}, e.g. ${result.problemSamples[0]}`)
  )
  return row
}

// ---------------------------------------------------------------------------
// Targets, table

const checksOf = (rows: ReadonlyArray<ScaleRow>, ns: ReadonlyArray<number>): Array<ScaleCheck> => {
  const checks: Array<ScaleCheck> = []
  for (const n of ns) {
    const relay = rows.find((r) => r.n === n && r.target === "relay")
    for (const row of rows.filter((r) => r.n === n)) {
      checks.push({ n, target: row.target, what: `every turn complete (${row.complete} of ${n})`, pass: row.complete === n })
      if (row.target === "relay") continue
      const floor = (figure: (r: ScaleRow) => number) => (relay === undefined ? Number.NaN : figure(relay))
      const firstLimit = 2 * floor((r) => r.firstDeltaP99Ms)
      const gapLimit = floor((r) => r.gapP99Ms) + 20
      const rssLimit = 2 * floor((r) => r.rssGrowthMb)
      checks.push({
        n, target: row.target,
        what: `first-delta p99 ${ms(row.firstDeltaP99Ms)} <= 2 × the relay's (${ms(firstLimit)})`,
        pass: row.firstDeltaP99Ms <= firstLimit
      })
      checks.push({
        n, target: row.target,
        what: `gap p99 ${ms(row.gapP99Ms)} <= the relay's + 20 ms (${ms(gapLimit)})`,
        pass: row.gapP99Ms <= gapLimit
      })
      checks.push({
        n, target: row.target,
        what: `peak RSS growth ${fmt(row.rssGrowthMb)} MB <= 2 × the relay's (${fmt(rssLimit)} MB)`,
        pass: row.rssGrowthMb <= rssLimit
      })
    }
  }
  return checks
}

export const scaleTable = (rows: ReadonlyArray<ScaleRow>) => {
  const header = ["N", "target", "turns complete", "first delta p50", "first delta p99", "gap p99", "peak RSS growth", "target CPU", "last turn ended"]
  const lines = rows.map((r) => [
    fmt(r.n),
    TARGET_NAMES[r.target],
    `${fmt(r.complete)} / ${fmt(r.n)}`,
    ms(r.firstDeltaP50Ms),
    ms(r.firstDeltaP99Ms),
    ms(r.gapP99Ms),
    `${fmt(r.rssGrowthMb)} MB`,
    `${fmt(r.cpuMs / 1000, 1)} s`,
    `${fmt(r.elapsedMs / 1000, 1)} s`
  ])
  return [header, header.map(() => "---"), ...lines].map((cells) => `| ${cells.join(" | ")} |`).join("\n")
}

// ---------------------------------------------------------------------------
// The case

export const scaleCase = async (spec: ScaleSpec, log: (line: string) => void = console.log): Promise<ScaleResult> => {
  const targets: Array<ScaleTarget> = ["relay", ...spec.backends]
  log(
    `\nscale: N streamed persisted turns at once (N = ${spec.ns.join(", ")}), each a chat of its own; the provider fake answers ` +
      `${DELTAS} deltas ${GAP_MS} ms apart (~${fmt((DELTAS * GAP_MS) / 1000)} s a turn); ${targets.map((t) => TARGET_NAMES[t]).join(", ")}; ` +
      `each a fresh process per N, warmed by ${WARMUP_TURNS} turns first; every accept queue ` +
      `${somaxconn()} deep (net.core.somaxconn)`
  )
  const failures: Array<string> = []
  const notes: Array<string> = []
  const limit = openFilesLimit()
  const ns = spec.ns.filter((n) => {
    if (limit === undefined || filesNeeded(n) <= limit) return true
    const message =
      `scale N=${n}: the open-files limit is ${limit} (ulimit -n), and the server needs ~${filesNeeded(n)} at N=${n} ` +
      `(two sockets a stream, its client's and its provider's; the load generator and the provider fake one each): ` +
      `not run. Raise it (\`ulimit -n ${Math.max(8192, filesNeeded(n))}\`, within \`ulimit -Hn\`) and run again.`
    console.error(`ERROR: ${message}`)
    failures.push(`scale N=${n}: open-files limit ${limit} < ${filesNeeded(n)}`)
    return false
  })
  const overridden = UNSET.filter((name) => spec.serverEnv[name] !== undefined)
  if (overridden.length > 0) notes.push(`scale: ${overridden.join(", ")} from --server-env ignored (the case measures the server's defaults)`)
  const serverEnv = Object.fromEntries(Object.entries(spec.serverEnv).filter(([name]) => !(UNSET as ReadonlyArray<string>).includes(name)))

  const upstream = await startHelper(`provider fake (${DELTAS} deltas ${GAP_MS} ms apart)`, here("./upstream.ts"), [], {
    ...process.env,
    STREAM_DELTAS: String(DELTAS),
    STREAM_GAP_MS: String(GAP_MS)
  })
  const postgresUrl = spec.backends.includes("postgres") ? await spec.scratchDatabase() : undefined
  const rows: Array<ScaleRow> = []
  const start = async (target: ScaleTarget, n: number): Promise<Started> =>
    target === "relay"
      ? startHelper("SSE relay", here("./sse-relay.ts"), [String(upstream.port)])
      : startServer({
        name: `scale server (${target}, N=${n})`,
        upstreamPort: upstream.port,
        databaseUrl: target === "postgres" ? postgresUrl : undefined,
        cpuProfDir: spec.cpuProfDir,
        env: serverEnv,
        unset: UNSET
      })
  try {
    for (const n of ns) {
      for (const target of targets) {
        let started: Started | undefined
        try {
          started = await start(target, n)
          rows.push(await measure(target, n, started, spec.chatBody, log))
          if (started.logFile !== undefined) {
            const errors = errorLines(started.logFile)
            if (errors.length > 0) notes.push(`scale N=${n} ${target}: the server logged ${errors.length} errors, first: ${errors[0]!.slice(0, 300)}`)
          }
        } catch (error) {
          failures.push(`scale N=${n} ${target}: ${error instanceof Error ? error.message : String(error)}`)
          log(`  N=${n} ${TARGET_NAMES[target]}: FAILED: ${error instanceof Error ? error.message : String(error)}`)
        } finally {
          if (started !== undefined) await stop(started.child)
        }
      }
    }
  } finally {
    await stop(upstream.child)
  }

  const checks = checksOf(rows, ns)
  const table = scaleTable(rows)
  log(`\n${table}\n`)
  for (const c of checks) log(`${c.pass ? "PASS" : "FAIL"}  scale N=${c.n} ${TARGET_NAMES[c.target]}: ${c.what}`)
  return { rows, checks, table, failures, notes }
}
