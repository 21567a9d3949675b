/**
 * The record of a run: each case's figures against its floor, the failures and notes, and how
 * they are printed (a phase's line, the markdown table). Kept free of the command line, so that
 * `scale.ts` can take its number format from here.
 */
import type { Phase } from "./phase.ts"

interface Run {
  readonly figure: number
  readonly floor: number
  /** figure ÷ floor, or figure − floor for an "added" comparison. */
  readonly vs: number
}

export interface CaseRecord {
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

export const records: Array<CaseRecord> = []
export const failures: Array<string> = []
export const machineNotes: Array<string> = []

export const median = (values: ReadonlyArray<number>) => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b)
  if (sorted.length === 0) return Number.NaN
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

export const record = (spec: Omit<CaseRecord, "figure" | "floor" | "vs" | "holds"> & { readonly holds: (vs: number, figure: number) => boolean | undefined }) => {
  const figure = spec.aggregate === "sum"
    ? spec.runs.reduce((n, r) => n + r.figure, 0)
    : median(spec.runs.map((r) => r.figure))
  const floor = median(spec.runs.map((r) => r.floor))
  const vs = median(spec.runs.map((r) => r.vs))
  const entry: CaseRecord = { ...spec, figure, floor, vs, holds: Number.isFinite(vs) || spec.compare === "none" ? spec.holds(vs, figure) : false }
  records.push(entry)
  return entry
}

export const pairsOf = (figures: ReadonlyArray<number>, floors: ReadonlyArray<number>, compare: "ratio" | "added"): Array<Run> =>
  figures.map((figure, i) => {
    const floor = floors[i]!
    return { figure, floor, vs: compare === "ratio" ? figure / floor : figure - floor }
  })

export const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits }) : "n/a")

export const phaseNotes = (label: string, phases: ReadonlyArray<Phase>) => {
  const notes: Array<string> = []
  const errors = phases.reduce((n, p) => n + p.result.errors, 0)
  if (errors > 0) notes.push(`${label}: ${errors} failed requests (${phases.flatMap((p) => p.result.errorSamples).slice(0, 2).join("; ")})`)
  const rest = median(phases.map((p) => p.restPct ?? Number.NaN))
  if (rest > 25) notes.push(`${label}: ${fmt(rest)} % of a core went outside the measured processes meanwhile (kernel networking, other work on the machine)`)
  return notes
}

/**
 * A route's throughput and p99 against the one-INSERT proxy's, from interleaved phases (the chatId
 * and planner cases): its throughput held to half the floor's, its p99 to `p99`'s target.
 */
export const recordAgainstInsertFloor = (
  spec: {
    readonly id: string
    readonly name: string
    readonly backend: "embedded" | "postgres"
    readonly p99: { readonly target: string; readonly holds: (vs: number, figure: number) => boolean | undefined }
  },
  phases: { readonly floors: ReadonlyArray<Phase>; readonly routes: ReadonlyArray<Phase> }
) => {
  const { floors, routes } = phases
  const common = { backend: spec.backend, floorName: "one-INSERT proxy", compare: "ratio" as const }
  record({
    ...common, id: `${spec.id}.throughput.${spec.backend}`, name: `${spec.name}: throughput`, unit: "req/s",
    runs: pairsOf(routes.map((p) => p.result.rps), floors.map((p) => p.result.rps), "ratio"),
    target: ">= 0.5 × floor", holds: (vs) => vs >= 0.5,
    notes: [...phaseNotes("floor", floors), ...phaseNotes("route", routes)]
  })
  record({
    ...common, id: `${spec.id}.p99.${spec.backend}`, name: `${spec.name}: p99`, unit: "ms",
    runs: pairsOf(routes.map((p) => p.result.p99), floors.map((p) => p.result.p99), "ratio"),
    target: spec.p99.target, holds: spec.p99.holds, notes: []
  })
}

/** CPU time of the target per event its reader timed (a streamed delta delivered), in µs. */
export const cpuUsPerEvent = (p: Phase) =>
  p.targetCpuMs === undefined || p.result.events === undefined || p.result.events.count === 0
    ? Number.NaN
    : (p.targetCpuMs * 1000) / p.result.events.count

export const logPhase = (label: string, p: Phase) =>
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
// The table

const cell = (n: number, unit: string) => (Number.isFinite(n) ? `${fmt(n, unit === "ms" ? 2 : 0)} ${unit}` : "—")

/** The markdown table of every record; `runs`: the interleaved runs each figure is the median of. */
export const table = (runs: number) => {
  const header = ["case", "backend", "figure", "floor (same run)", `vs floor (median of ${runs})`, "target", "holds"]
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
