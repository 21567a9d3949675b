/**
 * The scale case's background part (`npm run bench -- --only=scale`): work that is not a user's
 * turn never takes a user's place. Planner decisions and sub-agent steps have pools and limits of
 * their own (docs/performance.md, "What bounds each pool"); this measures it at a thousand of
 * each, on each backend, with a fresh server each:
 *
 * - **Planner decisions, 1,000 hosts at once, a provider that takes 2 s a decision.** 1,000 hosts,
 *   each with a claimed task, ask one decision each at the same moment (one connection each);
 *   the provider fake answers every one 2 s after it arrives (`ANSWER_DELAY_MS`). Every decision
 *   must be answered; printed beside it, the most provider calls the fake held at once (1,000
 *   when the server got every decision to the provider within the first one's 2 s: with a cap of
 *   K connections, a semaphore or a queue anywhere on the way it could not exceed K) and the
 *   decisions' latencies (the provider's 2 s and the server's own part, which is the server's CPU
 *   for a thousand requests at once on this machine).
 * - **Chat turns while 1,000 sub-agent jobs are queued.** The same burst of streamed, persisted
 *   turns (40 deltas 150 ms apart, the scale case's), first on the idle server, then once 1,000
 *   research jobs have been dispatched (by 1,000 chat turns whose model calls the job tool) and
 *   wait: `JOB_CONCURRENCY` of them hold their provider calls (the fake never answers a job's
 *   step), the rest are queued in the jobs table. Before the first burst, as many plain turns as
 *   the jobs' dispatching turns before the second, so both find the JIT as warm. The first delta's
 *   p50 and p99 side by side: the backlog must cost the turns nothing beyond the noise between two
 *   bursts (<= 1.25 × the idle server's p99).
 */
import { randomBytes } from "node:crypto"
import { fileURLToPath } from "node:url"
import { Pool } from "undici"
import { burst, firstDeltaP } from "./burst.ts"
import { percentile } from "./load.ts"
import { activeProfile, apiCall, readyHosts, withConcurrency } from "./hosts.ts"
import { DEADLINE_MS, fmt, STREAM_HEADERS, WARMUP_TURNS } from "./scale.ts"
import { ask, cpuMsOf, sleep, startHelper, startServer, stop } from "./processes.ts"

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))

/** The planner's provider: each decision's answer this long after its request. */
export const DECISION_DELAY_MS = 2_000

export interface BackgroundSpec {
  readonly backends: ReadonlyArray<"embedded" | "postgres">
  /** A fresh scratch database's URL (asked for once per PostgreSQL run). */
  readonly scratchDatabase: () => Promise<string>
  /** A new chat's streamed turn body (its own chatId) for each call. */
  readonly chatBody: () => string
  readonly serverEnv: Readonly<Record<string, string>>
  readonly hosts: number
  readonly jobs: number
  readonly turns: number
}

export interface BackgroundRow {
  readonly backend: "embedded" | "postgres"
  readonly hosts: number
  readonly answered: number
  readonly decisionP50Ms: number
  readonly decisionP99Ms: number
  readonly decisionMaxMs: number
  readonly decisionProblems: Readonly<Record<string, number>>
  /** The most decisions' provider calls the fake held at once. */
  readonly providerPeak: number
  readonly jobsQueued: number
  readonly turns: number
  readonly idle: { readonly complete: number; readonly p50Ms: number; readonly p99Ms: number }
  readonly backlog: { readonly complete: number; readonly p50Ms: number; readonly p99Ms: number }
}

export interface BackgroundCheck {
  readonly backend: "embedded" | "postgres"
  readonly what: string
  readonly pass: boolean
}

// ---------------------------------------------------------------------------
// Planner decisions

const decisions = async (origin: string, adminToken: string, fakePort: number, hosts: number) => {
  await activeProfile(origin, adminToken, fakePort, "bench-planner-slow")
  const bodies = await readyHosts(origin, adminToken, hosts, 16, "bench-bg-host")
  // One connection each, all sent in the same tick: the load generator never limits the decisions in flight.
  const pool = new Pool(origin, { connections: null, pipelining: 1, connect: { timeout: DEADLINE_MS } })
  const latencies: Array<number> = []
  const problems: Record<string, number> = {}
  try {
    await Promise.all(bodies.map(async ({ token, body }) => {
      const sentAt = performance.now()
      try {
        const response = await pool.request({
          method: "POST",
          path: "/internal/planner/decision",
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          body,
          signal: AbortSignal.timeout(DEADLINE_MS)
        })
        const text = await response.body.text()
        const ok = response.statusCode === 200 && (JSON.parse(text) as { toolName?: unknown }).toolName === "finish"
        if (ok) latencies.push(performance.now() - sentAt)
        else problems[`HTTP ${response.statusCode}`] = (problems[`HTTP ${response.statusCode}`] ?? 0) + 1
      } catch (error) {
        const kind = error instanceof Error ? error.name : "error"
        problems[kind] = (problems[kind] ?? 0) + 1
      }
    }))
  } finally {
    await pool.destroy()
  }
  const sorted = Float64Array.from(latencies).sort()
  return {
    answered: latencies.length,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1]!,
    problems
  }
}

// ---------------------------------------------------------------------------
// Chat turns beside a job backlog

const jobsInRunPhase = async (origin: string) => {
  const text = await (await fetch(`${origin}/metrics`)).text()
  const line = text.split("\n").find((l) => l.startsWith('switchboard_jobs{phase="run",status="running"}'))
  return line === undefined ? 0 : Number(line.split(" ").at(-1))
}

/**
 * `turns` persisted, non-streamed chat turns, 32 at a time, a chat each: with `dispatch`, each one's
 * model calls the research job tool once (the fake's `dispatch-job`), so each dispatches one job.
 */
const chatTurns = async (origin: string, turns: number, dispatch: boolean) => {
  const run = randomBytes(4).toString("hex")
  await withConcurrency(Array.from({ length: turns }, (_, i) => i), 32, async (i) => {
    const chatId = `bench-bg-${run}-${i}`
    const answer = await apiCall(origin, undefined, "POST", "/api/agent/chat", {
      chatId,
      messages: [{ id: `u-${chatId}`, role: "user", content: dispatch ? `dispatch-job ${i}` : `hello ${i}`, timestamp: 1 }]
    })
    const dispatched = (answer["jobs"] as ReadonlyArray<unknown> | undefined)?.length ?? 0
    if (dispatched !== (dispatch ? 1 : 0)) throw new Error(`chat ${chatId}: expected ${dispatch ? 1 : 0} jobs dispatched, the answer listed ${dispatched}`)
  })
}

// ---------------------------------------------------------------------------
// The part

export const backgroundCase = async (spec: BackgroundSpec, log: (line: string) => void = console.log) => {
  log(
    `\nscale, background: ${fmt(spec.hosts)} planner decisions at once from ${fmt(spec.hosts)} hosts against a provider taking ` +
      `${fmt(DECISION_DELAY_MS / 1000)} s each; then ${fmt(spec.turns)} streamed turns at once on the idle server and again ` +
      `with ${fmt(spec.jobs)} sub-agent jobs queued (a fresh server per backend)`
  )
  const fake = await startHelper(`provider fake (slow planner, held job steps)`, here("./upstream.ts"), [], {
    ...process.env,
    STREAM_DELTAS: "40",
    STREAM_GAP_MS: "150",
    ANSWER_DELAY_MS: String(DECISION_DELAY_MS)
  })
  const rows: Array<BackgroundRow> = []
  const failures: Array<string> = []
  try {
    for (const backend of spec.backends) {
      const adminToken = randomBytes(16).toString("hex")
      let server: Awaited<ReturnType<typeof startServer>> | undefined
      try {
        server = await startServer({
          name: `background server (${backend})`,
          upstreamPort: fake.port,
          databaseUrl: backend === "postgres" ? await spec.scratchDatabase() : undefined,
          env: {
            ...spec.serverEnv,
            ADMIN_TOKEN: adminToken,
            CREDENTIAL_KEY: randomBytes(32).toString("base64"),
            TASK_LEASE_SECONDS: "3600",
            JOB_MODEL_RESEARCH: "bench-job"
          },
          unset: ["MAX_CONCURRENT_TURNS", "PLANNER_MAX_CONCURRENT_DECISIONS", "CHAT_RPM", "JOB_CONCURRENCY"]
        })
        const origin = `http://127.0.0.1:${server.port}`
        const cpuBefore = cpuMsOf(server.child.pid)
        await ask(fake.child, { type: "peak" }, "peak")
        const planner = await decisions(origin, adminToken, fake.port, spec.hosts)
        const { peak } = await ask<{ peak: number }>(fake.child, { type: "peak" }, "peak")
        const plannerCpu = (cpuMsOf(server.child.pid) ?? Number.NaN) - (cpuBefore ?? Number.NaN)
        log(
          `  ${backend}: ${fmt(planner.answered)} of ${fmt(spec.hosts)} decisions answered; p50 ${fmt(planner.p50)} ms, ` +
            `p99 ${fmt(planner.p99)} ms, slowest ${fmt(planner.max)} ms (the provider's own ${fmt(DECISION_DELAY_MS)} ms); ` +
            `the provider held ${fmt(peak)} at once; ` +
            `server CPU over the setup and the burst ${fmt(plannerCpu / 1000, 1)} s` +
            (Object.keys(planner.problems).length === 0 ? "" : `; unanswered: ${JSON.stringify(planner.problems)}`)
        )
        // The scale case's turns: no user token (the server's default, open chat route), a chat each.
        const burstOf = (turns: number) =>
          burst({ origin, path: "/api/agent/chat", turns, body: spec.chatBody, headers: STREAM_HEADERS, deadlineMs: DEADLINE_MS })
        // Both bursts follow as many turns of the same path (the JIT's warm-up): the plain turns
        // before the first, the turns that dispatch the jobs before the second.
        await chatTurns(origin, spec.jobs, false)
        await burstOf(WARMUP_TURNS)
        await sleep(500)
        const idleBurst = await burstOf(spec.turns)
        const idle = { complete: idleBurst.complete, p50Ms: firstDeltaP(idleBurst, 0.5), p99Ms: firstDeltaP(idleBurst, 0.99) }
        await chatTurns(origin, spec.jobs, true)
        const queued = await jobsInRunPhase(origin)
        await sleep(500)
        const backlogBurst = await burstOf(spec.turns)
        const backlog = { complete: backlogBurst.complete, p50Ms: firstDeltaP(backlogBurst, 0.5), p99Ms: firstDeltaP(backlogBurst, 0.99) }
        log(
          `  ${backend}: ${fmt(spec.turns)} turns at once, idle: ${idle.complete} complete, first delta p50 ${fmt(idle.p50Ms)} ms ` +
            `p99 ${fmt(idle.p99Ms)} ms; with ${fmt(queued)} jobs in the run phase: ${backlog.complete} complete, ` +
            `p50 ${fmt(backlog.p50Ms)} ms p99 ${fmt(backlog.p99Ms)} ms`
        )
        rows.push({
          backend,
          hosts: spec.hosts,
          answered: planner.answered,
          decisionP50Ms: planner.p50,
          decisionP99Ms: planner.p99,
          decisionMaxMs: planner.max,
          decisionProblems: planner.problems,
          providerPeak: peak,
          jobsQueued: queued,
          turns: spec.turns,
          idle,
          backlog
        })
      } catch (error) {
        failures.push(`scale background ${backend}: ${error instanceof Error ? error.message : String(error)}`)
        log(`  ${backend}: FAILED: ${error instanceof Error ? error.message : String(error)}`)
      } finally {
        if (server !== undefined) await stop(server.child)
      }
    }
  } finally {
    await stop(fake.child)
  }
  const checks: Array<BackgroundCheck> = rows.flatMap((r) => [
    { backend: r.backend, what: `every decision answered (${fmt(r.answered)} of ${fmt(r.hosts)})`, pass: r.answered === r.hosts },
    { backend: r.backend, what: `${fmt(r.jobsQueued)} jobs waiting (>= ${fmt(spec.jobs)})`, pass: r.jobsQueued >= spec.jobs },
    {
      backend: r.backend,
      what: `every turn complete beside the backlog (${r.backlog.complete} of ${r.turns})`,
      pass: r.backlog.complete === r.turns && r.idle.complete === r.turns
    },
    {
      backend: r.backend,
      what: `first delta p99 beside the backlog ${fmt(r.backlog.p99Ms)} ms <= 1.25 × the idle server's (${fmt(1.25 * r.idle.p99Ms)} ms)`,
      pass: r.backlog.p99Ms <= 1.25 * r.idle.p99Ms
    }
  ])
  const header = ["backend", "decisions answered", "held by the provider at once", "decision p50", "decision p99", "slowest", "jobs waiting", "turns", "first delta p50 / p99, idle", "first delta p50 / p99, beside the jobs"]
  const table = [
    header,
    header.map(() => "---"),
    ...rows.map((r) => [
      r.backend === "postgres" ? "PostgreSQL" : "embedded",
      `${fmt(r.answered)} / ${fmt(r.hosts)}`,
      fmt(r.providerPeak),
      `${fmt(r.decisionP50Ms)} ms`,
      `${fmt(r.decisionP99Ms)} ms`,
      `${fmt(r.decisionMaxMs)} ms`,
      fmt(r.jobsQueued),
      fmt(r.turns),
      `${fmt(r.idle.p50Ms)} / ${fmt(r.idle.p99Ms)} ms`,
      `${fmt(r.backlog.p50Ms)} / ${fmt(r.backlog.p99Ms)} ms`
    ])
  ].map((cells) => `| ${cells.join(" | ")} |`).join("\n")
  log(`\n${table}\n`)
  for (const c of checks) log(`${c.pass ? "PASS" : "FAIL"}  scale background ${c.backend}: ${c.what}`)
  return { rows, checks, table, failures }
}
