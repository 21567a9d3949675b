/**
 * One burst against one target, read closely: what docs/performance.md ("What a burst is made of")
 * measured beside the scale case. The scale case's provider fake (40 deltas 150 ms apart, or
 * `--deltas`), then the target — the SSE relay, the same relay on the server's stack (`stack-sse-relay.ts`), or the built server on the embedded database or on
 * a scratch database of `DATABASE_URL`'s PostgreSQL (created, and dropped at the end) — warmed by
 * `--warm` turns, then
 * `--repeat` bursts of N turns at once. Printed: the first delta's deciles, the gap, the CPU of the
 * target, the load generator, the fake and PostgreSQL's processes over the bursts, the machine's,
 * and the target's RSS before and at its peak.
 *
 *   npx node bench/one-burst.ts <relay|stack|embedded|postgres> <N> [--deltas=40] [--warm=50] [--repeat=1] [--no-chat] [--cpu-prof=DIR]
 *
 * `--deltas=1` makes a turn's own cost stand out from its deltas'; `--no-chat` sends turns without a
 * `chatId` (nothing stored); `--cpu-prof=DIR` writes the target's V8 CPU profile there when it stops. Build first (`npm run build`): the server is `dist/`, as `npm start` runs it.
 */
import { execSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { burst } from "./burst.ts"
import type { BurstResult } from "./burst.ts"
import { percentile } from "./load.ts"
import { createScratchDatabase } from "./scratch.ts"
import { cpuMsOf, machineBusyMs, selfCpuMs, sleep, startHelper, startServer, stop, watchPeakRss } from "./processes.ts"

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    deltas: { type: "string", default: "40" },
    warm: { type: "string", default: "50" },
    repeat: { type: "string", default: "1" },
    "no-chat": { type: "boolean", default: false },
    "cpu-prof": { type: "string" }
  }
})
const [target, nRaw] = positionals
const n = Number(nRaw)
const counts = { deltas: Number(flags.deltas), warm: Number(flags.warm), repeat: Number(flags.repeat) }
if (
  (target !== "relay" && target !== "stack" && target !== "embedded" && target !== "postgres") || !Number.isInteger(n) || n < 1 ||
  !Object.values(counts).every((c) => Number.isInteger(c) && c >= 0) || counts.repeat < 1
) {
  console.error("usage: npx node bench/one-burst.ts <relay|stack|embedded|postgres> <N> [--deltas=40] [--warm=50] [--repeat=1] [--no-chat] [--cpu-prof=DIR]")
  process.exit(2)
}
const databaseUrl = process.env["DATABASE_URL"] || undefined
if (target === "postgres" && databaseUrl === undefined) {
  console.error("postgres: set DATABASE_URL (a PostgreSQL the run may create a scratch database in)")
  process.exit(2)
}

/** CPU of every PostgreSQL process on this machine, ms (its backends come and go with the server's pool). */
const postgresCpuMs = () => {
  try {
    return Number(execSync("for p in $(pgrep -x postgres); do awk '{print $14+$15}' /proc/$p/stat 2>/dev/null; done | awk '{s+=$1} END {print s*10}'").toString().trim())
  } catch {
    return Number.NaN
  }
}

const scratch = target === "postgres" ? await createScratchDatabase(databaseUrl!, "switchboard_one_burst") : undefined
const upstream = await startHelper("provider fake", here("./upstream.ts"), [], {
  ...process.env,
  STREAM_DELTAS: String(counts.deltas),
  STREAM_GAP_MS: "150"
})
/** V8's profiler for a helper target, as `startServer` runs it for the server. */
const profileArgv = (name: string) =>
  flags["cpu-prof"] === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${flags["cpu-prof"]}`, `--cpu-prof-name=${name}.cpuprofile`]
const started = target === "relay"
  ? await startHelper("SSE relay", here("./sse-relay.ts"), [String(upstream.port)], process.env, profileArgv("relay"))
  : target === "stack"
  ? await startHelper("SSE relay on the server's stack", here("./stack-sse-relay.ts"), [String(upstream.port)], process.env, profileArgv("stack"))
  : await startServer({
    name: `server (${target})`,
    upstreamPort: upstream.port,
    databaseUrl: scratch?.url,
    cpuProfDir: flags["cpu-prof"],
    unset: ["MAX_CONCURRENT_TURNS", "CHAT_RPM"]
  })
const run = Date.now().toString(36)
let seq = 0
const body = () =>
  JSON.stringify({
    ...(flags["no-chat"] ? {} : { chatId: `one-burst-${run}-${++seq}` }),
    messages: [{ id: "u1", role: "user", content: "hello", timestamp: 1 }]
  })
const spec = (turns: number) => ({
  origin: `http://127.0.0.1:${started.port}`,
  path: "/api/agent/chat",
  turns,
  body,
  headers: { "content-type": "application/json", accept: "text/event-stream" },
  deadlineMs: 60_000
})
try {
  for (let left = counts.warm; left > 0; left -= 500) await burst(spec(Math.min(left, 500)))
  await sleep(500)
  const pid = started.child.pid
  const rss = watchPeakRss(pid)
  const before = { target: cpuMsOf(pid), fake: cpuMsOf(upstream.child.pid), self: selfCpuMs(), machine: machineBusyMs(), postgres: postgresCpuMs() }
  const results: Array<BurstResult> = []
  for (let i = 0; i < counts.repeat; i++) results.push(await burst(spec(n)))
  const after = { target: cpuMsOf(pid), fake: cpuMsOf(upstream.child.pid), self: selfCpuMs(), machine: machineBusyMs(), postgres: postgresCpuMs() }
  const peak = rss.stop()
  const seconds = (a: number | undefined, b: number | undefined) => ((b ?? Number.NaN) - (a ?? Number.NaN)) / 1000
  for (const [i, r] of results.entries()) {
    const first = (p: number) => Math.round(percentile(r.firstDeltaMs, p))
    console.log(
      `${target} N=${n} burst ${i + 1}: ${r.complete} of ${n} complete` +
        (Object.keys(r.problems).length === 0 ? "" : ` (${JSON.stringify(r.problems)})`) +
        `; first delta p10 ${first(0.1)} p25 ${first(0.25)} p50 ${first(0.5)} p75 ${first(0.75)} p90 ${first(0.9)} p99 ${first(0.99)} ms` +
        (r.gapMs.length === 0 ? "" : `; gap p50 ${Math.round(percentile(r.gapMs, 0.5))} p99 ${Math.round(percentile(r.gapMs, 0.99))} ms`) +
        `; the last ended at ${(r.elapsedMs / 1000).toFixed(1)} s`
    )
  }
  const turns = n * counts.repeat
  console.log(
    `CPU over the bursts: target ${seconds(before.target, after.target).toFixed(2)} s ` +
      `(${((seconds(before.target, after.target) * 1000) / turns).toFixed(2)} ms a turn), ` +
      `load generator ${seconds(before.self, after.self).toFixed(2)} s, fake ${seconds(before.fake, after.fake).toFixed(2)} s, ` +
      `PostgreSQL ${seconds(before.postgres, after.postgres).toFixed(2)} s, machine ${seconds(before.machine, after.machine).toFixed(2)} s; ` +
      `target RSS ${rss.beforeMb.toFixed(0)} → ${peak.toFixed(0)} MB (+${(peak - rss.beforeMb).toFixed(0)})`
  )
} finally {
  await stop(started.child)
  await stop(upstream.child)
  await scratch?.drop()
}
process.exit(0)
