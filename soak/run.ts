/**
 * `npm run soak`: three replicas of the production build on one PostgreSQL,
 * under chats that dispatch jobs, shop chats whose MCP tool waits for the
 * user's approval (the kills phase), and hosts that ask the planner, through four
 * phases — replica kills (SIGKILL every 10 s), a database restart (stopped
 * for 5 s), provider faults (resets, stalls, trickles, lies, floods) and
 * rolling SIGTERMs — then a Markdown table of what the clients were told
 * against what the servers stored (see docs/reliability.md for how to read
 * it). Exits 1 when anything acknowledged was lost or duplicated, a replica
 * did not recover, a chat or a decision log became unreadable, or a graceful
 * stop did not exit 0; 0 (green) otherwise.
 *
 * Bounded (about ten minutes by default), loopback only, on a scratch
 * database it creates and drops; every process it started is stopped on the
 * way out, Ctrl-C and errors included (and a database it stopped is started
 * again).
 *
 * Options:
 *   --phases=kills,db,faults,sigterm   the phases to run, in this order
 *   --duration=S             seconds of load in each phase (default: kills 150, db 60, faults 90, sigterm 90)
 *   --chats=50 --hosts=30    clients during each phase
 *   --replicas=3
 *   --db-restart[=force]     allow the db phase to stop the local cluster: on by default when root on this
 *                            machine's cluster and nobody else is connected to it; =force even then
 *   --no-db-restart          never stop the database (the phase is skipped, said why)
 *   --logs=DIR               keep the servers' logs in DIR
 *   --quick                  CI: the kills phase only, 40 s, 10 chats, 6 hosts (about a minute)
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { cpSync, existsSync, readdirSync } from "node:fs"
import { loadavg } from "node:os"
import { fileURLToPath } from "node:url"
import { ask, sleep, startHelper, stopAll, workDir } from "../bench/processes.ts"
import { build } from "../scripts/build.ts"
import { Cluster, recovered } from "./cluster.ts"
import { startFakeMcp } from "@switchboard/server/testing"
import { settleApprovals, settleJobs, verify } from "./verify.ts"
import { fmtMs, table, verdictOf } from "./report.ts"
import type { PhaseName, PhaseResult } from "./report.ts"
import { readOptions } from "./options.ts"
import { prepareDatabase } from "./agents.ts"
import { newLedger, runChat, runHost, runOfficeChat, runShopChat } from "./workload.ts"
import type { Ledger } from "./workload.ts"

const { options, phases, quick } = readOptions()
const KILL_EVERY_MS = 10_000
const DB_DOWN_MS = 5_000
const SIGTERM_GRACE_MS = 30_000
const SETTLE_MS = 120_000
/** How long after the load a request started before it is still sent again (a dead turn's marker lives 10 s). */
const GIVE_UP_MS = 30_000
/** Think times: a chat's pause between turns and a host's between decisions (mean, ms). */
const CHAT_THINK_MS = 1_000
const HOST_THINK_MS = 500
const STEPS_PER_TASK = 3
const FAULT_RATE = 0.3

const databaseUrl = process.env["DATABASE_URL"] || "postgres://postgres@127.0.0.1:5432/postgres"
const runId = Date.now().toString(36)
const adminToken = randomBytes(16).toString("hex")

// ---------------------------------------------------------------------------
// The way out: every child stopped, a stopped database started, the scratch database dropped

let scratchName: string | undefined
/** The soak's MCP server: how many times it ran `refund` for each order. */
const refunds = new Map<string, number>()
let databaseStopped = false
const cluster = (() => {
  try {
    return readdirSync("/etc/postgresql").sort((a, b) => Number(a) - Number(b)).at(-1)
  } catch {
    return undefined
  }
})()
const pgCtl = (action: "stop" | "start") =>
  execFileSync("pg_ctlcluster", ["--skip-systemctl-redirect", cluster!, "main", action], { stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 })

const admin = (statement: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>, url = databaseUrl) =>
  Effect.runPromise(
    SqlClient.SqlClient.use(statement).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })))
  )

const dropScratch = async () => {
  if (scratchName === undefined) return
  const name = scratchName
  scratchName = undefined
  await admin((sql) => sql`DROP DATABASE IF EXISTS ${sql(name)} WITH (FORCE)`).catch((error: unknown) =>
    console.error(`could not drop the scratch database ${name}: ${String(error)}`)
  )
}

let leaving = false
const leave = async (code: number) => {
  if (leaving) return
  leaving = true
  if (databaseStopped) {
    try {
      pgCtl("start")
      databaseStopped = false
    } catch (error) {
      console.error(`could not start PostgreSQL again (${String(error)}): run pg_ctlcluster --skip-systemctl-redirect ${cluster} main start`)
    }
  }
  await stopAll()
  await dropScratch()
  process.exit(code)
}
process.on("SIGINT", () => {
  console.error("\ninterrupted: stopping every process the soak started")
  void leave(130)
})
process.on("SIGTERM", () => void leave(143))
// Once on the way out, what fails (a replica stopped under a restart) is the stop itself: not worth a word.
process.on("uncaughtException", (error) => {
  if (leaving) return
  console.error(`soak: ${error.stack ?? String(error)}`)
  void leave(1)
})
process.on("unhandledRejection", (error) => {
  if (leaving) return
  console.error(`soak: ${error instanceof Error ? error.stack : String(error)}`)
  void leave(1)
})

// ---------------------------------------------------------------------------
// One phase

const say = (text: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${text}`)

let probeSeq = 0
const probeChat = () => `soak-${runId}-probe-${++probeSeq}`

const foreignSessions = async (): Promise<string> => {
  const rows = await admin((sql) =>
    sql<{ datname: string; n: number }>`
      SELECT datname, count(*)::int AS n FROM pg_stat_activity
      WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND datname IS DISTINCT FROM ${scratchName ?? ""}
      GROUP BY datname`
  ) as ReadonlyArray<{ datname: string; n: number }>
  return rows.map((r) => `${r.datname ?? "?"} (${r.n})`).join(", ")
}

/** Why the db phase may not stop this PostgreSQL, or undefined when it may. */
const dbRestartRefusal = async (): Promise<string | undefined> => {
  if (options.dbRestart === "off") return "--no-db-restart"
  if (process.getuid?.() !== 0) return "not running as root (pg_ctlcluster needs it)"
  const url = new URL(databaseUrl)
  if (!["127.0.0.1", "localhost", "[::1]"].includes(url.hostname)) return `DATABASE_URL is not this machine's (${url.hostname})`
  if (cluster === undefined || !existsSync(`/etc/postgresql/${cluster}/main`)) return "no cluster under /etc/postgresql on this machine"
  const paths = (process.env["PATH"] ?? "").split(":")
  if (!paths.some((dir) => dir !== "" && existsSync(`${dir}/pg_ctlcluster`))) return "pg_ctlcluster is not installed"
  if (options.dbRestart !== "force") {
    const others = await foreignSessions()
    if (others !== "") return `other clients are connected to the cluster (${others}): stopping it would break them (--db-restart=force to do it anyway)`
  }
  return undefined
}

const runPhase = async (
  name: PhaseName,
  spec: { readonly upstreamPort: number; readonly env: Record<string, string> },
  during: (cluster: Cluster, stopAt: number, result: PhaseResult) => Promise<void>,
  beforeLoad: (origin: string) => Promise<void>
): Promise<PhaseResult> => {
  const result: PhaseResult = { name, recoveries: [], unrecovered: 0, fdsBefore: [], fdsAfter: [], replaced: [], exits: [], events: [] }
  const seconds = options.seconds(name)
  // A database of its own: what one phase leaves behind (a flooded transcript, a job still to wake) never weighs on the next.
  scratchName = `switchboard_soak_${runId}_${name}`
  await admin((sql) => sql`CREATE DATABASE ${sql(scratchName!)}`)
  say(`phase ${name}: scratch database ${scratchName}; starting ${options.replicas} replicas`)
  const scratchUrl = (() => {
    const u = new URL(databaseUrl)
    u.pathname = `/${scratchName}`
    return u.toString()
  })()
  const cluster = new Cluster(name, { upstreamPort: spec.upstreamPort, databaseUrl: scratchUrl, env: spec.env })
  try {
    await cluster.start(options.replicas)
    await beforeLoad(cluster.origins()[0]!)
    result.fdsBefore = cluster.fds()
    const pidsBefore = cluster.pids()
    const ledger = newLedger()
    result.ledger = ledger
    say(`phase ${name}: ${seconds} s of load, ${options.chats} chats, ${options.hosts} hosts`)
    const began = performance.now()
    const stopAt = began + seconds * 1000
    const deadlines = { stopAt, giveUpAt: stopAt + GIVE_UP_MS }
    // The kills phase: one chat in five is a shop chat, whose MCP tool waits for the user's approval, and one
    // in ten an office chat, whose jobs (a sub-agent kind of the soak's own) park on such a tool.
    const shops = name === "kills" ? Math.max(2, Math.round(options.chats / 5)) : 0
    const offices = name === "kills" ? Math.max(2, Math.round(options.chats / 10)) : 0
    const clients = Promise.all([
      ...Array.from({ length: options.chats - shops - offices }, (_, c) => runChat(cluster, ledger, `soak-${runId}-${name}-${c}`, c + 1, CHAT_THINK_MS, deadlines)),
      ...Array.from({ length: shops }, (_, c) => runShopChat(cluster, ledger, `soak-${runId}-${name}-shop-${c}`, 500 + c, CHAT_THINK_MS, deadlines)),
      ...Array.from({ length: offices }, (_, c) => runOfficeChat(cluster, ledger, `soak-${runId}-${name}-office-${c}`, 700 + c, CHAT_THINK_MS, deadlines)),
      ...Array.from({ length: options.hosts }, (_, h) =>
        runHost(cluster, { token: adminToken }, ledger, `soak-${runId}-${name}-host-${h}`, 1000 + h, HOST_THINK_MS, STEPS_PER_TASK, deadlines))
    ])
    await Promise.all([clients, during(cluster, stopAt, result)])
    result.seconds = (performance.now() - began) / 1000
    say(`phase ${name}: load over (${result.seconds.toFixed(0)} s); waiting for the jobs to settle`)
    if (!(await settleJobs(cluster, ledger, SETTLE_MS))) result.events.push(`jobs still running ${SETTLE_MS / 1000} s after the load`)
    if (!(await settleApprovals(cluster, ledger, SETTLE_MS))) result.events.push(`decisions still unanswered ${SETTLE_MS / 1000} s after the load`)
    say(`phase ${name}: reading back what was stored`)
    result.findings = await verify(cluster, { token: adminToken }, ledger, (order) => refunds.get(order) ?? 0)
    result.fdsAfter = cluster.fds()
    result.replaced = cluster.pids().map((pid, i) => pid !== pidsBefore[i])
    result.exits = cluster.exits
  } finally {
    await cluster.stopAll(SIGTERM_GRACE_MS)
    result.exits = cluster.exits
    await dropScratch()
  }
  say(`phase ${name}: done`)
  return result
}

/**
 * The pause before the next kill or restart: KILL_EVERY_MS ± 30 %, from a seeded sequence. A fixed
 * 10 s divides the job lease (30 s): a job stranded by one kill would be re-claimed just as the
 * next kill of the same slot comes, again and again, and end in "runner stopped 3 times".
 */
let jitterSeed = 7
const nextPause = () => {
  jitterSeed = (Math.imul(jitterSeed, 1103515245) + 12345) >>> 0
  return KILL_EVERY_MS * (0.7 + 0.6 * (jitterSeed / 4294967296))
}

/** About every KILL_EVERY_MS, the next replica is killed with SIGKILL and restarted; the recovery is timed. */
const replicaKills = async (cluster: Cluster, stopAt: number, result: PhaseResult) => {
  for (let i = 0; performance.now() + KILL_EVERY_MS / 2 < stopAt; i++) {
    const next = performance.now() + nextPause()
    const slot = i % cluster.replicas.length
    const since = await cluster.kill(slot)
    const took = await recovered(cluster, since, probeChat)
    if (took === undefined) {
      result.unrecovered++
      result.events.push(`kill ${i + 1} (replica ${slot + 1}): no recovery within 120 s`)
    } else result.recoveries.push(took)
    await sleep(Math.max(0, next - performance.now()))
  }
}

/** A rolling restart: about every KILL_EVERY_MS the next replica gets SIGTERM, then a new process. */
const rollingRestarts = async (cluster: Cluster, stopAt: number, result: PhaseResult) => {
  await sleep(KILL_EVERY_MS / 2)
  for (let i = 0; performance.now() + KILL_EVERY_MS / 2 < stopAt; i++) {
    const next = performance.now() + nextPause()
    const slot = i % cluster.replicas.length
    const since = performance.now()
    const exit = await cluster.restart(slot, SIGTERM_GRACE_MS)
    result.events.push(`SIGTERM replica ${slot + 1} (pid ${exit.pid}): exit ${exit.status} after ${(exit.stopMs / 1000).toFixed(1)} s${exit.forced ? " (forced with SIGKILL)" : ""}`)
    const took = await recovered(cluster, since, probeChat)
    if (took === undefined) result.unrecovered++
    else result.recoveries.push(took)
    await sleep(Math.max(0, next - performance.now()))
  }
}

/** PostgreSQL stopped for DB_DOWN_MS a third of the way in; the replicas must come back by themselves. */
const databaseRestart = async (cluster: Cluster, stopAt: number, result: PhaseResult) => {
  await sleep(Math.max(0, (stopAt - performance.now()) / 3))
  const pids = cluster.pids()
  say(`phase db: stopping PostgreSQL for ${DB_DOWN_MS / 1000} s`)
  databaseStopped = true
  const stopping = performance.now()
  pgCtl("stop")
  await sleep(DB_DOWN_MS)
  pgCtl("start")
  databaseStopped = false
  const since = performance.now()
  result.dbDownMs = since - stopping
  say(`phase db: PostgreSQL started again (${fmtMs(result.dbDownMs)} after the stop command)`)
  const took = await recovered(cluster, since, probeChat)
  if (took === undefined) result.unrecovered++
  else result.recoveries.push(took)
  result.sameProcesses = cluster.pids().every((pid, i) => pid === pids[i]) && cluster.replicas.every((r) => r.server.child.exitCode === null)
}

// ---------------------------------------------------------------------------

const main = async () => {
  const started = performance.now()
  say(`building dist/ (the production build)`)
  build()
  const provider = await startHelper("fake provider", fileURLToPath(new URL("./fake-provider.ts", import.meta.url)), [])
  // The shop chats' MCP server, here: it counts each order's runs (a run is counted when it arrives).
  // `payout` is the office chats' sub-agents' tool: counted the same way.
  const counted = (name: string) => ({
    name,
    run: async (args: Record<string, unknown>) => {
      const order = String(args["order"])
      refunds.set(order, (refunds.get(order) ?? 0) + 1)
      await sleep(200)
      return { content: [{ type: "text" as const, text: `refunded ${order}` }] }
    }
  })
  const mcp = await Effect.runPromise(startFakeMcp([counted("refund"), counted("payout")]).pipe(Scope.provide(await Effect.runPromise(Scope.make()))))
  const setFaults = (rate: number) => ask(provider.child, { type: "faults", rate } as { readonly type: string }, "faults-set")
  const commit = (() => {
    try {
      return execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim()
    } catch {
      return "?"
    }
  })()

  const baseEnv = {
    ADMIN_TOKEN: adminToken,
    CREDENTIAL_KEY: randomBytes(32).toString("base64"),
    // Host leases outlive the run: the hosts here never renew, and a lease lost is not what is measured.
    TASK_LEASE_SECONDS: "3600",
    // A dead replica's turn holds its chat 10 s (5 s provider timeout + 5 s grace) instead of 90 s: the
    // default would make the run long, not different. The job lease stays the default (30 s), as deployed.
    // The sub-agents only wait (1.5 s): more of them at once per replica, so that the jobs keep up with 50 chats.
    JOB_CONCURRENCY: "8",
    LLM_TIMEOUT_MS: "5000",
    TURN_MARKER_GRACE_MS: "5000",
    LOG_LEVEL: "warn",
    // A parked job no client decided (its client gave up at the hard deadline) is denied well inside the settle time.
    APPROVAL_TIMEOUT: "30 seconds"
  }
  const scriptedEnv = { ...baseEnv, LLM_PROVIDER: "scripted", LLM_MODEL: "soak", LLM_SCRIPT: fileURLToPath(new URL("./chat-script.json", import.meta.url)) }
  const httpEnv = { ...baseEnv, LLM_PROVIDER: "openai-compatible", LLM_MODEL: "soak", LLM_API_KEY: "soak" }
  // The planner's provider profile, made in each phase's database before its hosts ask.
  // The planner's provider profile and the agents, made in each phase's database before its load.
  const ensureProfile = (origin: string) => prepareDatabase(origin, adminToken, provider.port, mcp.url)

  const results: Array<PhaseResult> = []
  for (const name of phases) {
    const spec = { upstreamPort: provider.port, env: name === "faults" ? httpEnv : scriptedEnv }
    if (name === "db") {
      const refusal = await dbRestartRefusal()
      if (refusal !== undefined) {
        say(`phase db: skipped — ${refusal}`)
        results.push({ name, skipped: refusal, recoveries: [], unrecovered: 0, fdsBefore: [], fdsAfter: [], replaced: [], exits: [], events: [] })
        continue
      }
    }
    const during = {
      kills: replicaKills,
      db: databaseRestart,
      sigterm: rollingRestarts,
      faults: async (cluster: Cluster, stopAt: number, result: PhaseResult) => {
        const pids = cluster.pids()
        await setFaults(FAULT_RATE)
        await sleep(Math.max(0, stopAt - performance.now()))
        await setFaults(0)
        // Keep serving: once the provider behaves, a fresh turn works on every replica, in the same processes.
        const took = await recovered(cluster, performance.now(), probeChat)
        if (took === undefined) result.unrecovered++
        else result.recoveries.push(took)
        result.sameProcesses = cluster.pids().every((pid, i) => pid === pids[i]) && cluster.replicas.every((r) => r.server.child.exitCode === null)
        const served = await ask<{ served: Record<string, number> }>(provider.child, { type: "count" }, "count")
        result.faultsServed = served.served
      }
    }[name]
    const result = await runPhase(name, spec, during, ensureProfile)
    results.push(result)
    for (const event of result.events) say(`  ${event}`)
    const f = result.findings
    if (f !== undefined && f.samples.length > 0) for (const s of f.samples) say(`  finding: ${s}`)
  }

  if (options.logs !== undefined) {
    cpSync(workDir, options.logs, { recursive: true, filter: (src) => !src.includes("/data-") })
    say(`server logs copied to ${options.logs}`)
  }
  const minutes = (performance.now() - started) / 60_000
  const verdicts = results.map(verdictOf)
  const green = verdicts.every((v) => v.ok)
  console.log(
    `\n## Soak: ${green ? "green" : "RED"} — commit ${commit}, ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC, ` +
      `${minutes.toFixed(1)} min, load average ${loadavg()[0]!.toFixed(1)} at the end\n`
  )
  console.log(table(results, options))
  console.log()
  await leave(green ? 0 : 1)
}

void main()
