/**
 * The planner's cases, on the server `main` starts with `PLANNER_ENV`: a host's decision through
 * the whole path against the one-INSERT proxy, and the retention sweep against a plain DELETE.
 * Each is left out, said so, when the build has no route for it.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, ManagedRuntime, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import type { ChildProcess } from "node:child_process"
import { randomBytes } from "node:crypto"
import { performance } from "node:perf_hooks"
import { startInsertFloor } from "./floors.ts"
import { activeProfile, apiCall, readyHosts } from "./hosts.ts"
import { options } from "./options.ts"
import { interleaved, loadFor } from "./phase.ts"
import { scratchUrl } from "./postgres.ts"
import { stop } from "./processes.ts"
import type { ServerProcess } from "./processes.ts"
import { fmt, machineNotes, pairsOf, record, recordAgainstInsertFloor } from "./record.ts"
import { checkCompletion, newChatBody } from "./requests.ts"

// The planner's settings (ignored by a build without the planner). Leases outlive the whole run.
const ADMIN_TOKEN = randomBytes(16).toString("hex")
export const PLANNER_ENV = {
  ADMIN_TOKEN,
  CREDENTIAL_KEY: randomBytes(32).toString("base64"),
  TASK_LEASE_SECONDS: "3600",
  // The retention case starts the sweep itself; the periodic one must not run in between.
  PLANNER_PRUNE_INTERVAL_SECONDS: "86400"
}

const adminCall = (origin: string, method: string, path: string, body?: unknown) => apiCall(origin, ADMIN_TOKEN, method, path, body)

/** Whether the build serves `path` (its OpenAPI document names it); a case it lacks is left out, and said so. */
const servesRoute = async (origin: string, caseName: string, path: string) => {
  const document = await (await fetch(`${origin}/openapi.json`)).text()
  if (document.includes(path)) return true
  machineNotes.push(`${caseName}: this build has no ${path} route; the case is left out`)
  console.log(`\n${caseName}: not in this build (no ${path}): left out`)
  return false
}

/**
 * Planner decision: 32 hosts (one per connection, one decision in flight
 * each), each on its own claimed task, through the whole path (host token,
 * active profile, decrypted key, provider call, step index, persisted
 * decision) vs the one-INSERT proxy. Left out (said so) when the build has no
 * planner route.
 */
export const plannerCase = async (upstream: { child: ChildProcess; port: number }, server: ServerProcess, backend: "embedded" | "postgres") => {
  const origin = `http://127.0.0.1:${server.port}`
  if (!(await servesRoute(origin, "planner decision", "/internal/planner/decision"))) return
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
    recordAgainstInsertFloor(
      { id: "planner", name: "planner decision", backend, p99: { target: "p99 <= 20 ms", holds: (_vs, figure) => figure <= 20 } },
      await interleaved(upstream.child, [floor, proxy.child, "one-INSERT proxy"], [route, server.child, "planner decision"])
    )
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
export const retentionCase = async (server: ServerProcess, backend: "embedded" | "postgres") => {
  const origin = `http://127.0.0.1:${server.port}`
  if (!(await servesRoute(origin, "retention sweep", "/admin/planner-decisions/prune"))) return
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
