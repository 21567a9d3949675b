/**
 * One measured phase of one target (its load, and the CPU of the target and of the rest of the
 * machine meanwhile, read from outside), and what the paired cases share around it: a load
 * generator whose answer is checked before it is measured, and the floor and the case interleaved.
 */
import type { ChildProcess } from "node:child_process"
import { LoadGenerator } from "./load.ts"
import type { PhaseResult, Target } from "./load.ts"
import { options } from "./options.ts"
import { cpuMsOf, machineBusyMs, runqueueMsOf, selfCpuMs } from "./processes.ts"
import { logPhase } from "./record.ts"

export interface Phase {
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

export const phase = async (load: LoadGenerator, target: ChildProcess | undefined, upstream: ChildProcess, durationMs: number): Promise<Phase> => {
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

/** A load generator for one target, its answer checked once before anything is measured. */
export const loadFor = async (name: string, target: Target, check: (status: number, text: string) => string | undefined) => {
  const load = new LoadGenerator(target, options.concurrency)
  const smoke = await load.once()
  const problem = check(smoke.status, smoke.text)
  if (problem !== undefined) {
    await load.close()
    throw new Error(`${name}: smoke request failed: ${problem} (HTTP ${smoke.status}: ${smoke.text.slice(0, 300)})`)
  }
  return load
}

/**
 * One warm-up of each, then `--runs` measured phases: floor, case, floor, case, … With `extras`
 * (diagnostic targets), each run measures them too, between its floor and its case.
 */
export const interleaved = async (
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
