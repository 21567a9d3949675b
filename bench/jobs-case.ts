/**
 * The jobs case as the run records it: `jobs.ts`'s run of dispatches and steers, a warm-up and
 * `--runs` of them, on a server of its own (a scripted provider, not the mock `main` starts).
 */
import { fileURLToPath } from "node:url"
import { jobsCase } from "./jobs.ts"
import type { JobsFigures } from "./jobs.ts"
import { options } from "./options.ts"
import { scratchUrl } from "./postgres.ts"
import { errorLines, startServer, stop } from "./processes.ts"
import { fmt, machineNotes, record } from "./record.ts"

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))

/** Job dispatch → steer delivered (`bench/jobs.ts`), on a server of its own with the scripted instant sub-agent. */
export const jobsRunCase = async (upstream: { readonly port: number }, backend: "embedded" | "postgres") => {
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
