/**
 * The soak's clients and what they were told. Chats send turns that each
 * dispatch a research job; hosts claim tasks and ask the planner for
 * decisions through the `/internal` routes (a small loop, not the CLI's host
 * agent, so that 30 of them stay light). Every answer a client got is written
 * in the ledger: what a client got a 200 for is what must be stored at the
 * end, once.
 *
 * A request whose answer never came (the replica died under it, the
 * connection was reset) has an unknown outcome: it is sent again, as a client
 * would, with the same message id; such requests are counted, because they
 * are what may leave something stored that no client was told about.
 */
import { sleep } from "../bench/processes.ts"
import type { Cluster } from "./cluster.ts"

/** Every JOB_EVERY-th turn of a chat (its first included) asks for research. */
export const JOB_EVERY = 3

export interface ChatLedger {
  readonly chatId: string
  /** User message ids answered 200, with the assistant message id and the jobs of that answer. */
  readonly acked: Array<{ readonly userId: string; readonly messageId: string; readonly jobIds: ReadonlyArray<string> }>
  /** User message ids sent at least once (acknowledged or not). */
  readonly sent: Set<string>
  longest409: number
  longest409Ms: number
}

export interface DecisionAck {
  readonly taskId: string
  readonly attempt: number
  readonly stepIndex: number
}

/** A decision of a server tool call that waited for approval, answered 202 (or 409 after an unknown outcome: ours). */
export interface ApprovalAck {
  readonly chatId: string
  readonly approvalId: string
  readonly approved: boolean
  /** The MCP call's argument: what the soak's MCP server counts its runs by. */
  readonly order: string
  /** A sub-agent job's approval (an office chat's): its answer is the job's result, not a transcript message. */
  readonly jobId?: string
}

export interface Ledger {
  readonly chats: Array<ChatLedger>
  readonly approvals: Array<ApprovalAck>
  readonly decisions: Array<DecisionAck>
  /** Every task a host claimed (their decision logs are read at the end). */
  readonly tasks: Set<string>
  /** Answers other than 200/204/409 turn_in_flight, by status (`network` when none came). */
  readonly failures: Map<string, number>
  /** Requests sent again after their outcome was unknown (no answer at all). */
  unknownOutcomes: number
  /** Requests given up at the phase's hard deadline. */
  abandoned: number
}

export const newLedger = (): Ledger => ({ chats: [], approvals: [], decisions: [], tasks: new Set(), failures: new Map(), unknownOutcomes: 0, abandoned: 0 })

const count = (ledger: Ledger, key: string) => ledger.failures.set(key, (ledger.failures.get(key) ?? 0) + 1)

interface Answer {
  readonly status: number
  readonly body: Record<string, unknown>
}

/** One request to whichever replica is up; status 0 when no answer came. */
const call = async (
  cluster: Cluster,
  method: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {}
): Promise<Answer> => {
  const origin = cluster.pick()
  if (origin === undefined) return { status: -1, body: {} }
  try {
    const response = await fetch(`${origin}${path}`, {
      method,
      headers: { "content-type": "application/json", ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000)
    })
    const text = await response.text()
    let parsed: Record<string, unknown> = {}
    try {
      parsed = text === "" ? {} : JSON.parse(text) as Record<string, unknown>
    } catch {
      parsed = { unparsable: text.slice(0, 200) }
    }
    return { status: response.status, body: parsed }
  } catch {
    return { status: 0, body: {} }
  }
}

/** A small seeded generator (mulberry32): the same think times in every run. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

export interface Deadlines {
  /** No new turn, task or decision is started after it. */
  readonly stopAt: number
  /** A request started before `stopAt` is retried until it is answered or until then. */
  readonly giveUpAt: number
}

/**
 * One turn sent until it is answered 200 (its body) or the hard deadline (`undefined`, counted as
 * abandoned). A 409 `turn_in_flight` (a wake turn, a continuation, or a dead replica's turn whose
 * marker has not expired) is sent again after 100 ms: the streak is measured. Any other failure
 * is counted and sent again after 250 ms, with the same message id.
 */
const sendTurn = async (cluster: Cluster, ledger: Ledger, chat: ChatLedger, body: unknown, deadlines: Deadlines) => {
  let streak = 0
  let streakSince = 0
  for (;;) {
    if (performance.now() > deadlines.giveUpAt) {
      ledger.abandoned++
      return undefined
    }
    const answer = await call(cluster, "POST", "/api/agent/chat", body)
    if (answer.status === 409 && answer.body["code"] === "turn_in_flight") {
      if (streak++ === 0) streakSince = performance.now()
      chat.longest409 = Math.max(chat.longest409, streak)
      chat.longest409Ms = Math.max(chat.longest409Ms, performance.now() - streakSince)
      await sleep(100)
      continue
    }
    if (streak > 0) chat.longest409Ms = Math.max(chat.longest409Ms, performance.now() - streakSince)
    streak = 0
    if (answer.status === 200) return answer.body
    if (answer.status === 0) ledger.unknownOutcomes++
    count(ledger, answer.status === 0 ? "network" : answer.status === -1 ? "no replica up" : `${answer.status} ${String(answer.body["code"] ?? "")}`.trim())
    await sleep(250)
  }
}

/**
 * One chat: a turn (every third `Research topic i of …`, which dispatches a
 * job; the others `Hello i …`, answered at once), a think time of about
 * `thinkMs`, the next, until `stopAt` (each sent by `sendTurn`).
 */
export const runChat = (cluster: Cluster, ledger: Ledger, chatId: string, seed: number, thinkMs: number, deadlines: Deadlines) =>
  chatClient(ledger, chatId, seed, thinkMs, deadlines, async (i, chat) => {
    const userId = `u${i}`
    // One turn in JOB_EVERY dispatches a job (the scripts dispatch on "topic"): jobs a few replicas can keep up with.
    const content = i % JOB_EVERY === 0 ? `Research topic ${i} of ${chatId}` : `Hello ${i} from ${chatId}`
    const message = { id: userId, role: "user", content, timestamp: Date.now() }
    chat.sent.add(userId)
    const body = await sendTurn(cluster, ledger, chat, { chatId, messages: [message] }, deadlines)
    if (body === undefined) return false
    const jobs = (body["jobs"] ?? []) as ReadonlyArray<{ id: string }>
    chat.acked.push({ userId, messageId: String(body["messageId"]), jobIds: jobs.map((j) => j.id) })
    return true
  })

/**
 * A chat's client: its ledger, a seeded think time, then `turn(i)` and a think time of about
 * `thinkMs`, again until `stopAt` — or until a turn gives up (false: the hard deadline passed).
 */
const chatClient = async (
  ledger: Ledger,
  chatId: string,
  seed: number,
  thinkMs: number,
  deadlines: Deadlines,
  turn: (i: number, chat: ChatLedger, next: () => number) => Promise<boolean>
) => {
  const chat: ChatLedger = { chatId, acked: [], sent: new Set(), longest409: 0, longest409Ms: 0 }
  ledger.chats.push(chat)
  const next = random(seed)
  await sleep(next() * thinkMs)
  for (let i = 0; performance.now() < deadlines.stopAt; i++) {
    if (!(await turn(i, chat, next))) return
    await sleep(thinkMs * (0.5 + next()))
  }
}

/** The agent of the shop chats: an MCP server's `refund` that needs the user's approval (soak/run.ts defines it). */
export const SHOP_AGENT = "soak-shop"

/**
 * One shop chat: `Refund order …` turns, each answered with the MCP call waiting for approval;
 * the decision (seven in ten approve) posted to whichever replica is up, sent again when no
 * answer came (a 409 `approval_decided` then means the first one landed). The next turn may
 * find the continuation still running: its 409 `turn_in_flight` is waited out as a wake's is.
 */
export const runShopChat = (cluster: Cluster, ledger: Ledger, chatId: string, seed: number, thinkMs: number, deadlines: Deadlines) =>
  chatClient(ledger, chatId, seed, thinkMs, deadlines, async (i, chat, next) => {
    const userId = `u${i}`
    // The model passes the whole message as the order: what the MCP server counts runs by.
    const order = `Refund order ${chatId}-${i}`
    const message = { id: userId, role: "user", content: order, timestamp: Date.now() }
    chat.sent.add(userId)
    const body = await sendTurn(cluster, ledger, chat, { agent: SHOP_AGENT, chatId, messages: [message] }, deadlines)
    if (body === undefined) return false
    chat.acked.push({ userId, messageId: String(body["messageId"]), jobIds: [] })
    const pending = (body["pendingApprovals"] ?? []) as ReadonlyArray<{ readonly approvalId: string }>
    for (const { approvalId } of pending) {
      const approved = next() < 0.7
      const decided = await postDecision(cluster, ledger, chatId, approvalId, approved, deadlines)
      if (decided === undefined) return false
      if (decided) ledger.approvals.push({ chatId, approvalId, approved, order })
    }
    return true
  })

/** The agent of the office chats, and its sub-agent kind (soak/run.ts defines them). */
export const OFFICE_AGENT = "soak-office"
export const OFFICE_KIND = "soak-payout"

/** The sub-agent's first message for an office order: the scripted sub-agent passes it whole as the payout's order. */
export const officeOrder = (text: string) => `Your input:\n${JSON.stringify({ order: text }, null, 2)}`

/** Posts one decision, sent again when no answer came; true when it is the ledger's (202, or 409 after an unknown outcome). */
const postDecision = async (cluster: Cluster, ledger: Ledger, chatId: string, approvalId: string, approved: boolean, deadlines: Deadlines) => {
  let unknown = false
  for (;;) {
    if (performance.now() > deadlines.giveUpAt) {
      ledger.abandoned++
      return undefined
    }
    const answer = await call(cluster, "POST", `/api/chats/${chatId}/approvals/${approvalId}`, approved ? { approved } : { approved, reason: "soak says no" })
    if (answer.status === 202 || (answer.status === 409 && unknown)) return true
    if (answer.status === 0) {
      unknown = true
      ledger.unknownOutcomes++
    }
    count(ledger, answer.status === 0 ? "network" : answer.status === -1 ? "no replica up" : `decision ${answer.status} ${String(answer.body["code"] ?? "")}`.trim())
    if (answer.status !== 0 && answer.status !== -1 && answer.status < 500) return false
    await sleep(250)
  }
}

/**
 * One office chat: `Office order …` turns, each dispatching a job of a sub-agent kind of the soak's
 * own whose MCP call (`office__payout`) waits for the user's approval: the job parks, the client
 * sees `waitingFor` in the job list and decides it (seven in ten approve) on whichever replica is up.
 */
export const runOfficeChat = (cluster: Cluster, ledger: Ledger, chatId: string, seed: number, thinkMs: number, deadlines: Deadlines) =>
  chatClient(ledger, chatId, seed, thinkMs, deadlines, async (i, chat, next) => {
    const userId = `u${i}`
    const text = `Office order ${chatId}-${i}`
    const message = { id: userId, role: "user", content: text, timestamp: Date.now() }
    chat.sent.add(userId)
    const body = await sendTurn(cluster, ledger, chat, { agent: OFFICE_AGENT, chatId, messages: [message] }, deadlines)
    if (body === undefined) return false
    const jobs = ((body["jobs"] ?? []) as ReadonlyArray<{ id: string }>).map((j) => j.id)
    chat.acked.push({ userId, messageId: String(body["messageId"]), jobIds: jobs })
    for (const jobId of jobs) {
      // Parked once its sub-agent reached the call (a kill meanwhile: another replica runs it again).
      let waiting: string | undefined
      while (waiting === undefined) {
        if (performance.now() > deadlines.giveUpAt) {
          ledger.abandoned++
          return false
        }
        const list = await call(cluster, "GET", `/api/jobs?chatId=${chatId}`, undefined)
        const job = ((list.body["jobs"] ?? []) as ReadonlyArray<{ id: string; status: string; waitingFor?: { approvalId: string } }>)
          .find((j) => j.id === jobId)
        if (job !== undefined && job.status !== "running") break
        waiting = job?.waitingFor?.approvalId
        if (waiting === undefined) await sleep(250)
      }
      if (waiting === undefined) continue
      const approved = next() < 0.7
      const decided = await postDecision(cluster, ledger, chatId, waiting, approved, deadlines)
      if (decided === undefined) return false
      if (decided) ledger.approvals.push({ chatId, approvalId: waiting, approved, order: officeOrder(text), jobId })
    }
    return true
  })

export interface Admin {
  readonly token: string
}

const adminHeaders = (admin: Admin) => ({ authorization: `Bearer ${admin.token}` })

/** An admin request, sent again until answered (bounded by `giveUpAt`). */
const adminCall = async (cluster: Cluster, admin: Admin, ledger: Ledger, method: string, path: string, body: unknown, giveUpAt: number) => {
  while (performance.now() < giveUpAt) {
    const answer = await call(cluster, method, path, body, adminHeaders(admin))
    if (answer.status >= 200 && answer.status < 300) return answer
    if (answer.status === 0) ledger.unknownOutcomes++
    count(ledger, answer.status === 0 ? "network" : `${answer.status} ${String(answer.body["code"] ?? "")}`.trim())
    await sleep(250)
  }
  return undefined
}

const TOOLS = [
  { name: "soak_step", description: "Take the next step of the task", parameters: { type: "object", properties: { note: { type: "string" } } } },
  { name: "finish", description: "The task is done", parameters: { type: "object", properties: {} } }
]

/**
 * One host: a task created for it (admin), claimed, `steps` decisions, the
 * result reported; again until `stopAt`. A decision that failed is asked
 * again (the host agent's business, as the contract says).
 */
export const runHost = async (
  cluster: Cluster,
  admin: Admin,
  ledger: Ledger,
  name: string,
  seed: number,
  thinkMs: number,
  steps: number,
  deadlines: Deadlines
) => {
  const next = random(seed)
  const created = await adminCall(cluster, admin, ledger, "POST", "/admin/hosts", { name }, deadlines.giveUpAt)
  if (created === undefined) return
  const hostId = String(created.body["hostId"])
  const auth = { authorization: `Bearer ${String(created.body["token"])}` }
  await sleep(next() * thinkMs)
  while (performance.now() < deadlines.stopAt) {
    const task = await adminCall(cluster, admin, ledger, "POST", "/admin/tasks", { goal: `soak ${name}`, hostId }, deadlines.giveUpAt)
    if (task === undefined) return
    let claimed: { taskId: string; attempt: number } | undefined
    while (claimed === undefined && performance.now() < deadlines.stopAt) {
      const answer = await call(cluster, "POST", `/internal/hosts/${hostId}/claim`, {}, auth)
      if (answer.status === 200) {
        const t = answer.body["task"] as { taskId: string; attempt: number }
        claimed = { taskId: t.taskId, attempt: t.attempt }
      } else {
        if (answer.status === 0) ledger.unknownOutcomes++
        if (answer.status !== 204) count(ledger, answer.status === 0 ? "network" : `${answer.status} ${String(answer.body["code"] ?? "")}`.trim())
        await sleep(250)
      }
    }
    if (claimed === undefined) return
    ledger.tasks.add(claimed.taskId)
    for (let step = 0; step < steps; step++) {
      if (performance.now() > deadlines.stopAt && step > 0) break
      for (;;) {
        if (performance.now() > deadlines.giveUpAt) {
          ledger.abandoned++
          return
        }
        const answer = await call(cluster, "POST", "/internal/planner/decision", {
          hostId,
          taskId: claimed.taskId,
          attempt: claimed.attempt,
          systemPrompt: "You carry out tasks. Call exactly one tool.",
          userPrompt: `Goal: soak ${name}\nSteps taken: ${step}`,
          tools: TOOLS
        }, auth)
        if (answer.status === 200) {
          ledger.decisions.push({ taskId: claimed.taskId, attempt: claimed.attempt, stepIndex: Number(answer.body["stepIndex"]) })
          break
        }
        if (answer.status === 0) ledger.unknownOutcomes++
        count(ledger, answer.status === 0 ? "network" : `${answer.status} ${String(answer.body["code"] ?? "")}`.trim())
        await sleep(250)
      }
      await sleep(thinkMs * (0.5 + next()))
    }
    while (performance.now() < deadlines.giveUpAt) {
      const answer = await call(cluster, "POST", `/internal/tasks/${claimed.taskId}/result`, {
        hostId,
        attempt: claimed.attempt,
        status: "succeeded",
        output: { steps }
      }, auth)
      // A 409 here is a result already recorded by an attempt whose answer was lost.
      if (answer.status === 200 || answer.status === 409) break
      if (answer.status === 0) ledger.unknownOutcomes++
      count(ledger, answer.status === 0 ? "network" : `${answer.status} ${String(answer.body["code"] ?? "")}`.trim())
      await sleep(250)
    }
  }
}
