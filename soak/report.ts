/** The soak's report: one phase's result, its verdict, and the table the run prints (docs/reliability.md). */
import type { Exit } from "./cluster.ts"
import { duplicatedOf, lostOf } from "./verify.ts"
import type { Findings } from "./verify.ts"
import type { Ledger } from "./workload.ts"

export type PhaseName = "kills" | "db" | "faults" | "sigterm"

export interface PhaseResult {
  readonly name: PhaseName
  readonly skipped?: string
  seconds?: number
  findings?: Findings
  ledger?: Ledger
  recoveries: Array<number>
  unrecovered: number
  /** The db phase: did the same processes live through it. */
  sameProcesses?: boolean
  fdsBefore: Array<number | undefined>
  fdsAfter: Array<number | undefined>
  replaced: Array<boolean>
  /** Graceful stops: the rolling ones (sigterm phase) and the end of every phase. */
  exits: Array<Exit>
  faultsServed?: Record<string, number>
  /** The db phase: from the stop command to the start command's return. */
  dbDownMs?: number
  events: Array<string>
}

export const fmtMs = (ms: number) => `${(ms / 1000).toFixed(1)} s`
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!

interface Verdict {
  readonly ok: boolean
  readonly why: Array<string>
}

export const verdictOf = (r: PhaseResult): Verdict => {
  if (r.skipped !== undefined) return { ok: true, why: [] }
  const f = r.findings
  const why: Array<string> = []
  if (f === undefined) return { ok: false, why: ["no findings (the phase failed)"] }
  if (lostOf(f) > 0) why.push(`${lostOf(f)} lost`)
  if (duplicatedOf(f) > 0) why.push(`${duplicatedOf(f)} duplicated`)
  if (f.skippedSteps > 0) why.push(`${f.skippedSteps} step indexes skipped`)
  if (f.unreadable > 0) why.push(`${f.unreadable} chats or decision logs unreadable`)
  if (r.unrecovered > 0) why.push(`${r.unrecovered} recoveries missed`)
  if (r.sameProcesses === false) why.push(r.name === "db" ? "a replica restarted during the database outage" : "a replica died under the faults")
  const badExits = r.exits.filter((e) => e.status !== "0")
  if (badExits.length > 0) why.push(`${badExits.length} graceful stops did not exit 0`)
  // Without faults, a job ends in error only because restarts stopped it.
  if (r.name !== "faults" && f.jobsError > 0) why.push(`${f.jobsError} jobs ended in error`)
  const unexplained = f.storedNotAcked - (r.ledger?.unknownOutcomes ?? 0) - (r.ledger?.abandoned ?? 0)
  if (r.name === "faults" && unexplained > 0) why.push(`${unexplained} half-stored (stored, no client told, no answer lost)`)
  return { ok: why.length === 0, why }
}

const exitSummary = (exits: ReadonlyArray<Exit>) => {
  if (exits.length === 0) return "–"
  const byStatus = new Map<string, number>()
  for (const e of exits) {
    const key = `${e.status}${e.forced ? " (forced)" : ""}`
    byStatus.set(key, (byStatus.get(key) ?? 0) + 1)
  }
  const slowest = Math.max(...exits.map((e) => e.stopMs))
  return `${[...byStatus].map(([status, n]) => `${status} ×${n}`).join(", ")}; slowest stop ${fmtMs(slowest)}`
}

export const table = (results: ReadonlyArray<PhaseResult>, options: { readonly replicas: number; readonly chats: number; readonly hosts: number }) => {
  const rows: Array<[string, (r: PhaseResult, f: Findings) => string]> = [
    ["load (s) / replicas / chats / hosts", (r) => `${r.seconds?.toFixed(0)} / ${options.replicas} / ${options.chats} / ${options.hosts}`],
    ["turns acked / stored", (_, f) => `${f.turnsAcked} / ${f.turnsStored}`],
    ["jobs acked / stored (done, error)", (_, f) => `${f.jobsAcked} / ${f.jobsStored} (${f.jobsDone}, ${f.jobsError})`],
    ["decisions acked / stored", (_, f) => `${f.decisionsAcked} / ${f.decisionsStored}`],
    ["approvals decided / answered (interrupted; of parked jobs)", (_, f) =>
      f.approvalsAcked === 0 ? "–" : `${f.approvalsAcked} / ${f.approvalsAnswered} (${f.approvalsInterrupted}; ${f.jobApprovals})`],
    ["lost (turns, jobs, steers, decisions, unsettled, approvals)", (_, f) =>
      `**${lostOf(f)}** (${f.lostTurns}, ${f.lostJobs}, ${f.lostSteers}, ${f.lostDecisions}, ${f.unsettledJobs}, ${f.lostApprovals})`],
    ["duplicated (message ids, steers, stepIndex, tool runs, denied runs)", (_, f) =>
      `**${duplicatedOf(f)}** (${f.duplicateMessageIds}, ${f.duplicateSteers}, ${f.duplicateSteps}, ${f.toolRunsTwice}, ${f.deniedRan})`],
    ["stepIndex skipped", (_, f) => String(f.skippedSteps)],
    ["unreadable chats / decision logs", (_, f) => String(f.unreadable)],
    ["stored, no 200 seen / answers lost in transit / given up", (r, f) => `${f.storedNotAcked} / ${r.ledger?.unknownOutcomes ?? 0} / ${r.ledger?.abandoned ?? 0}`],
    ["longest 409 turn_in_flight streak (tries, time)", (_, f) => `${f.longest409}, ${fmtMs(f.longest409Ms)}`],
    ["failed answers, retried", (r) => {
      const entries = [...(r.ledger?.failures ?? new Map<string, number>())].sort((a, b) => b[1] - a[1])
      return entries.length === 0 ? "0" : entries.slice(0, 4).map(([k, n]) => `${k}: ${n}`).join("; ")
    }],
    ["recovery: all /readyz 200 + a turn on each (median / max, n)", (r) =>
      r.recoveries.length === 0 ? (r.unrecovered > 0 ? `none (${r.unrecovered} missed)` : "–")
        : `${fmtMs(median(r.recoveries))} / ${fmtMs(Math.max(...r.recoveries))}, ${r.recoveries.length}${r.unrecovered > 0 ? `, ${r.unrecovered} missed` : ""}${r.sameProcesses === undefined ? "" : r.sameProcesses ? ", no restart" : ", **restarted**"}${r.dbDownMs === undefined ? "" : ` (from the start command; down ${fmtMs(r.dbDownMs)})`}`],
    ["fds per replica, start → end (* = new process)", (r) =>
      r.fdsBefore.map((b, i) => `${b ?? "?"}→${r.fdsAfter[i] ?? "?"}${r.replaced[i] === true ? "*" : ""}`).join(", ")],
    ["exit codes after SIGTERM; slowest", (r) => exitSummary(r.exits)],
    ["job errors", (_, f) => f.jobErrors.size === 0 ? "–" : [...f.jobErrors].map(([k, n]) => `${n}× ${k}`).join("; ").replaceAll("|", "/")],
    ["provider faults served", (r) => r.faultsServed === undefined ? "–" : Object.entries(r.faultsServed).map(([k, n]) => `${k} ${n}`).join(", ")],
    ["verdict", (r) => { const v = verdictOf(r); return v.ok ? "green" : `**red**: ${v.why.join("; ")}` }]
  ]
  const header = `| figure | ${results.map((r) => r.name).join(" | ")} |\n| --- | ${results.map(() => "---").join(" | ")} |`
  const lines = rows.map(([label, cell]) =>
    `| ${label} | ${results.map((r) => r.skipped !== undefined ? (label === "verdict" ? `skipped: ${r.skipped}` : "–") : r.findings === undefined ? "?" : cell(r, r.findings)).join(" | ")} |`
  )
  return [header, ...lines].join("\n")
}
