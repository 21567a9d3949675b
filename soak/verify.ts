/**
 * The end of a phase: what the clients were told (the ledger) against what
 * the server shows — `GET /api/chats/{id}/messages`, `GET /api/jobs`,
 * `GET /admin/planner-decisions` — once every job has settled.
 *
 * - lost: a turn answered 200 whose user message or answer is not in the
 *   transcript; a job acknowledged that is not listed; a settled job without
 *   its steer; a decision answered 200 that is not in its task's log; a job
 *   still running when the settle time ran out.
 * - duplicated: a message id twice in a transcript, a job's steer twice, a
 *   step index twice in one attempt's log.
 * - skipped: a gap in an attempt's step indexes.
 * - unreadable: a chat, job list or decision log that does not answer 200
 *   (a chat broken for good counts here).
 */
import { sleep } from "../bench/processes.ts"
import type { Cluster } from "./cluster.ts"
import type { Admin, Ledger } from "./workload.ts"

interface Message {
  readonly id: string
  readonly role: string
  readonly toolResult?: { readonly error?: string }
  readonly metadata?: { readonly subagentResult?: { readonly jobId?: string }; readonly approval?: { readonly approved?: boolean } }
}
interface Job {
  readonly id: string
  readonly status: string
  readonly error?: string
  readonly result?: unknown
}
interface Decision {
  readonly attempt: number
  readonly stepIndex: number
}

export interface Findings {
  turnsAcked: number
  turnsStored: number
  jobsAcked: number
  jobsStored: number
  jobsDone: number
  jobsError: number
  jobErrors: Map<string, number>
  decisionsAcked: number
  decisionsStored: number
  lostTurns: number
  lostJobs: number
  lostSteers: number
  lostDecisions: number
  unsettledJobs: number
  duplicateMessageIds: number
  duplicateSteers: number
  duplicateSteps: number
  skippedSteps: number
  /** Stored while no client was told: turns answered by no 200, decisions no host got. */
  storedNotAcked: number
  unreadable: number
  /** Decisions answered 202, and those whose call's answer is in the transcript. */
  approvalsAcked: number
  /** Of those, the decisions of sub-agent jobs parked on a call (the office chats'). */
  jobApprovals: number
  approvalsAnswered: number
  /** Approved calls whose run was cut by a kill (answered "interrupted": they ran at most once). */
  approvalsInterrupted: number
  /** A decision answered 202 whose call has no answer, or an answer of the other decision. */
  lostApprovals: number
  /** An MCP call run more than once for one approval; a denied one run at all. */
  toolRunsTwice: number
  deniedRan: number
  longest409: number
  longest409Ms: number
  samples: Array<string>
}

const getJson = async <A>(cluster: Cluster, path: string, headers: Record<string, string> = {}): Promise<A | undefined> => {
  for (let attempt = 0; attempt < 5; attempt++) {
    const origin = cluster.pick()
    if (origin !== undefined) {
      try {
        const response = await fetch(`${origin}${path}`, { headers, signal: AbortSignal.timeout(60_000) })
        if (response.ok) return (await response.json()) as A
        await response.arrayBuffer()
      } catch {
        // another replica, after a pause
      }
    }
    await sleep(500)
  }
  return undefined
}

/** Waits (bounded) until no job of the phase's chats is running. */
export const settleJobs = async (cluster: Cluster, ledger: Ledger, timeoutMs: number) => {
  const deadline = performance.now() + timeoutMs
  while (performance.now() < deadline) {
    let running = 0
    for (const chat of ledger.chats) {
      const answer = await getJson<{ jobs: ReadonlyArray<Job> }>(cluster, `/api/jobs?chatId=${chat.chatId}`)
      // A list that does not answer is counted unreadable later; it cannot settle.
      running += answer === undefined ? 0 : answer.jobs.filter((j) => j.status === "running").length
      if (running > 0) break
    }
    if (running === 0) return true
    await sleep(1_000)
  }
  return false
}

/** Runs `f` over `items`, `width` at a time. */
const inBatches = async <A>(items: ReadonlyArray<A>, width: number, f: (a: A) => Promise<void>) => {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(f))
}

/**
 * Waits (bounded) until every decision answered 202 has its call's answer in the transcript: a
 * continuation may still run (or wait for a dead replica's lease) when the load stops.
 */
export const settleApprovals = async (cluster: Cluster, ledger: Ledger, timeoutMs: number) => {
  const deadline = performance.now() + timeoutMs
  // A job's approval is answered by its job's result (settleJobs waits for those).
  let waiting = ledger.approvals.filter((a) => a.jobId === undefined)
  while (waiting.length > 0 && performance.now() < deadline) {
    const chats = [...new Set(waiting.map((a) => a.chatId))]
    const answered = new Set<string>()
    await inBatches(chats, 8, async (chatId) => {
      const transcript = await getJson<{ messages: ReadonlyArray<Message> }>(cluster, `/api/chats/${chatId}/messages`)
      for (const m of transcript?.messages ?? []) answered.add(m.id)
    })
    waiting = waiting.filter((a) => !answered.has(`approval_${a.approvalId}`))
    if (waiting.length > 0) await sleep(1000)
  }
  return waiting.length === 0
}

/**
 * A settled office job's result as its approval's answer: `refunded …` when the call ran, the call's
 * error (`denied by the user: …`, `… interrupted …`) when not; undefined while it runs. A job that
 * failed after the decision (its runners killed `maxRuns` times) answered nothing: it counts as
 * interrupted, its call having run at most once (which `runs` checks).
 */
const jobAnswer = (job: Job | undefined, approved: boolean): Message | undefined => {
  if (job === undefined || job.status === "running") return undefined
  const result = (job.result ?? {}) as { outcome?: unknown; error?: unknown }
  const outcome = typeof result.outcome === "string" ? result.outcome : `interrupted: the job failed: ${String(result.error ?? job.error)}`
  return {
    id: job.id,
    role: "tool",
    metadata: { approval: { approved: outcome.startsWith("interrupted: the job failed") ? approved : !outcome.startsWith("denied by the user") } },
    ...(outcome.startsWith("refunded") ? {} : { toolResult: { error: outcome } })
  }
}

/** `runs(order)`: how many times the soak's MCP server ran `refund` for that order. */
export const verify = async (cluster: Cluster, admin: Admin, ledger: Ledger, runs: (order: string) => number = () => 0): Promise<Findings> => {
  const f: Findings = {
    approvalsAcked: ledger.approvals.length, jobApprovals: ledger.approvals.filter((a) => a.jobId !== undefined).length, approvalsAnswered: 0, approvalsInterrupted: 0, lostApprovals: 0, toolRunsTwice: 0, deniedRan: 0,
    turnsAcked: 0, turnsStored: 0, jobsAcked: 0, jobsStored: 0, jobsDone: 0, jobsError: 0, jobErrors: new Map(),
    decisionsAcked: ledger.decisions.length, decisionsStored: 0,
    lostTurns: 0, lostJobs: 0, lostSteers: 0, lostDecisions: 0, unsettledJobs: 0,
    duplicateMessageIds: 0, duplicateSteers: 0, duplicateSteps: 0, skippedSteps: 0,
    storedNotAcked: 0, unreadable: 0, longest409: 0, longest409Ms: 0, samples: []
  }
  // A few of each kind of finding, so that a flood of one kind does not hide another.
  const perKind = new Map<string, number>()
  const sample = (text: string, kind = text.replace(/^\S+: /, "").replace(/[a-z]+_[0-9a-f-]{8,}|\bu\d+\b|\d+/g, "#")) => {
    const n = perKind.get(kind) ?? 0
    perKind.set(kind, n + 1)
    if (n < 3) f.samples.push(text)
  }

  await inBatches(ledger.chats, 8, async (chat) => {
    f.longest409 = Math.max(f.longest409, chat.longest409)
    f.longest409Ms = Math.max(f.longest409Ms, chat.longest409Ms)
    f.turnsAcked += chat.acked.length
    const ackedJobs = chat.acked.flatMap((a) => a.jobIds)
    f.jobsAcked += ackedJobs.length
    // The job list first: a job it shows settled must then have its steer in the transcript read after it.
    const jobList = await getJson<{ jobs: ReadonlyArray<Job> }>(cluster, `/api/jobs?chatId=${chat.chatId}`)
    const transcript = await getJson<{ messages: ReadonlyArray<Message> }>(cluster, `/api/chats/${chat.chatId}/messages`)
    if (transcript === undefined || jobList === undefined) {
      f.unreadable++
      sample(`${chat.chatId}: ${transcript === undefined ? "transcript" : "job list"} does not answer 200`)
      return
    }
    const ids = new Map<string, number>()
    const steers = new Map<string, number>()
    for (const m of transcript.messages) {
      ids.set(m.id, (ids.get(m.id) ?? 0) + 1)
      const jobId = m.metadata?.subagentResult?.jobId
      if (jobId !== undefined) steers.set(jobId, (steers.get(jobId) ?? 0) + 1)
    }
    for (const [id, n] of ids) {
      if (n > 1) {
        f.duplicateMessageIds += n - 1
        sample(`${chat.chatId}: message ${id} stored ${n} times`)
      }
    }
    const userIds = [...ids.keys()].filter((id) => /^u\d+$/.test(id))
    f.turnsStored += userIds.length
    const ackedUsers = new Set(chat.acked.map((a) => a.userId))
    f.storedNotAcked += userIds.filter((id) => !ackedUsers.has(id)).length
    for (const a of chat.acked) {
      if (!ids.has(a.userId) || !ids.has(a.messageId)) {
        f.lostTurns++
        sample(`${chat.chatId}: turn ${a.userId} answered 200 (${a.messageId}) but ${ids.has(a.userId) ? "its answer" : "its user message"} is not stored`)
      }
    }
    const byId = new Map(transcript.messages.map((m) => [m.id, m]))
    const listed = new Map(jobList.jobs.map((j) => [j.id, j]))
    for (const a of ledger.approvals.filter((a) => a.chatId === chat.chatId)) {
      const ran = runs(a.order)
      // A parked job's call: answered in the job's result (what its sub-agent submitted of the call's answer).
      const answer = a.jobId === undefined ? byId.get(`approval_${a.approvalId}`) : jobAnswer(listed.get(a.jobId), a.approved)
      if (answer === undefined || answer.metadata?.approval?.approved !== a.approved) {
        f.lostApprovals++
        sample(`${chat.chatId}: approval ${a.approvalId} decided (${a.approved ? "yes" : "no"}) but ${answer === undefined ? "its call has no answer" : "its answer says the other decision"}`)
      } else {
        f.approvalsAnswered++
        if (/interrupted/.test(answer.toolResult?.error ?? "")) f.approvalsInterrupted++
        else if (a.approved && ran === 0) {
          f.lostApprovals++
          sample(`${chat.chatId}: approval ${a.approvalId} approved and answered, but the tool never ran`)
        }
      }
      if (ran > 1) {
        f.toolRunsTwice += ran - 1
        sample(`${chat.chatId}: the tool of approval ${a.approvalId} ran ${ran} times`)
      }
      if (!a.approved && ran > 0) {
        f.deniedRan += ran
        sample(`${chat.chatId}: the tool of approval ${a.approvalId} ran though it was denied`)
      }
    }
    const jobs = new Map(jobList.jobs.map((j) => [j.id, j]))
    f.jobsStored += jobList.jobs.length
    for (const id of ackedJobs) {
      if (!jobs.has(id)) {
        f.lostJobs++
        sample(`${chat.chatId}: job ${id} acknowledged but not listed`)
      }
    }
    for (const job of jobList.jobs) {
      const n = steers.get(job.id) ?? 0
      if (job.status === "running") {
        f.unsettledJobs++
        sample(`${chat.chatId}: job ${job.id} still running after the settle time`)
        continue
      }
      if (job.status === "done") f.jobsDone++
      else {
        f.jobsError++
        // A provider failure names only its reason ("… the model provider failed (timeout)"): count by it.
        const error = job.error ?? "?"
        const reason = /the model provider failed \(([a-z0-9_]+)\)/.exec(error)?.[1] ?? error.slice(0, 48)
        f.jobErrors.set(reason, (f.jobErrors.get(reason) ?? 0) + 1)
      }
      if (n === 0) {
        f.lostSteers++
        sample(`${chat.chatId}: job ${job.id} ${job.status} but its steer is not in the transcript`)
      }
      if (n > 1) {
        f.duplicateSteers += n - 1
        sample(`${chat.chatId}: job ${job.id}'s steer stored ${n} times`)
      }
    }
  })

  const acks = new Map<string, Array<number>>()
  for (const d of ledger.decisions) {
    const key = `${d.taskId}#${d.attempt}`
    acks.set(key, [...(acks.get(key) ?? []), d.stepIndex])
  }
  for (const [key, steps] of acks) {
    const unique = new Set(steps)
    if (unique.size !== steps.length) {
      f.duplicateSteps += steps.length - unique.size
      sample(`${key}: the same stepIndex answered twice (${steps.join(",")})`)
    }
  }
  const headers = { authorization: `Bearer ${admin.token}` }
  const logs = new Map<string, ReadonlyArray<Decision>>()
  await inBatches([...ledger.tasks], 8, async (taskId) => {
    const log = await getJson<{ decisions: ReadonlyArray<Decision> }>(cluster, `/admin/planner-decisions?taskId=${taskId}`, headers)
    if (log === undefined) {
      f.unreadable++
      sample(`${taskId}: decision log does not answer 200`)
    } else logs.set(taskId, log.decisions)
  })
  // The first step's index (0 today; 1 should the numbering change): the smallest seen anywhere.
  const first = Math.min(1, ...[...logs.values()].flatMap((ds) => ds.map((d) => d.stepIndex)), ...ledger.decisions.map((d) => d.stepIndex))
  for (const [taskId, decisions] of logs) {
    f.decisionsStored += decisions.length
    const byAttempt = new Map<number, Array<number>>()
    for (const d of decisions) byAttempt.set(d.attempt, [...(byAttempt.get(d.attempt) ?? []), d.stepIndex])
    for (const [attempt, steps] of byAttempt) {
      const unique = [...new Set(steps)].sort((a, b) => a - b)
      if (unique.length !== steps.length) {
        f.duplicateSteps += steps.length - unique.length
        sample(`${taskId}#${attempt}: a stepIndex stored twice (${steps.join(",")})`)
      }
      const top = unique.at(-1) ?? first - 1
      if (top - first + 1 !== unique.length) {
        f.skippedSteps += top - first + 1 - unique.length
        sample(`${taskId}#${attempt}: step indexes ${unique.join(",")} skip`)
      }
      const acked = new Set(acks.get(`${taskId}#${attempt}`) ?? [])
      f.storedNotAcked += unique.filter((s) => !acked.has(s)).length
      for (const s of acked) {
        if (!unique.includes(s)) {
          f.lostDecisions++
          sample(`${taskId}#${attempt}: decision ${s} answered 200 but not stored`)
        }
      }
    }
    for (const [key, steps] of acks) {
      if (key.startsWith(`${taskId}#`) && !byAttempt.has(Number(key.slice(taskId.length + 1)))) {
        f.lostDecisions += steps.length
        sample(`${key}: ${steps.length} decisions answered 200, none stored`)
      }
    }
  }
  return f
}

export const lostOf = (f: Findings) => f.lostTurns + f.lostJobs + f.lostSteers + f.lostDecisions + f.unsettledJobs + f.lostApprovals
export const duplicatedOf = (f: Findings) => f.duplicateMessageIds + f.duplicateSteers + f.duplicateSteps + f.toolRunsTwice + f.deniedRan
