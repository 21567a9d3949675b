/**
 * The "job dispatch → steer delivered" case of `npm run bench`: 200 research
 * jobs over 20 chats against a server whose scripted provider makes the
 * research sub-agent answer at once (`jobs-script.json`), so what is measured
 * is Switchboard's own path: the turn that dispatches and acknowledges a job,
 * the runner's claim, the wake pipeline, the steer in the transcript.
 *
 * - ack: the client-observed latency of the turn that dispatched the job
 *   (two scripted provider calls, the job record, the write-ahead turn);
 * - completion → steer: from the job's `finishedAt` (result stored, steer
 *   queued) to the steer message's `timestamp` (taken when the wake turn writes
 *   it to the transcript), both server clocks on this machine;
 * - lost / duplicated: after everything settled, each job's steer must be in
 *   its chat's transcript exactly once, and every job `done`.
 *
 * Pacing: each chat sends its 10 turns one after another, with a think time
 * between them (`thinkMs`, default 250 ms, drawn uniformly from ½× to 1½× of
 * it, seeded per chat), and the 20 chats start spread over one think time,
 * as 20 people typing would. Back-to-back turns (`thinkMs: 0`, the pacing of
 * earlier figures) measure something else: the wake turn delivering a steer
 * then races the client's own next turn for the chat (one turn at a time per
 * chat), so completion → steer becomes the length of the client's burst and
 * the ack includes waiting behind wake turns. A turn answered 409 (a wake
 * turn holds the chat) is sent again after 5 ms: `ack` is the latency of the
 * attempt that was answered, `ackWithRetries` from the first attempt.
 * `serverCpuMsPerJob` is the server process's CPU time (user + system, from
 * /proc) over the run divided by the jobs: a figure that the noise of a shared
 * machine disturbs far less than latencies.
 */
import { percentile } from "./load.ts"
import { cpuMsOf, sleep } from "./processes.ts"

export interface JobsFigures {
  readonly jobs: number
  readonly ackP50Ms: number
  readonly ackP99Ms: number
  readonly ackWithRetriesP99Ms: number
  readonly steerP50Ms: number
  readonly steerP99Ms: number
  readonly lost: number
  readonly duplicated: number
  readonly retries409: number
  readonly seconds: number
  readonly serverCpuMsPerJob: number
}

interface Job {
  readonly id: string
  readonly status: string
  readonly finishedAt?: string
}

interface Message {
  readonly id: string
  readonly timestamp: number
  readonly metadata?: { readonly subagentResult?: { readonly jobId?: string } }
}

const post = (base: string, path: string, body: unknown) =>
  fetch(`${base}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })

const getJson = async <A>(base: string, path: string): Promise<A> => {
  const response = await fetch(`${base}${path}`)
  if (!response.ok) throw new Error(`GET ${path}: ${response.status} ${await response.text()}`)
  return (await response.json()) as A
}

/** A small seeded generator (mulberry32): the same think times in every run. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const sorted = (values: ReadonlyArray<number>) => Float64Array.from(values).sort()

export const jobsCase = async (
  port: number,
  options: { readonly chats?: number; readonly perChat?: number; readonly thinkMs?: number; readonly serverPid?: number } = {}
): Promise<JobsFigures> => {
  const base = `http://127.0.0.1:${port}`
  const chats = options.chats ?? 20
  const perChat = options.perChat ?? 10
  const thinkMs = options.thinkMs ?? 250
  const run = Date.now().toString(36)
  const acks: Array<number> = []
  const acksWithRetries: Array<number> = []
  let retries409 = 0
  const cpuBefore = cpuMsOf(options.serverPid)
  const began = performance.now()

  const chatIds = Array.from({ length: chats }, (_, c) => `bench-jobs-${run}-${c}`)
  await Promise.all(chatIds.map(async (chatId, c) => {
    const next = random(c + 1)
    if (thinkMs > 0) await sleep(next() * thinkMs)
    for (let i = 0; i < perChat; i++) {
      if (i > 0 && thinkMs > 0) await sleep(thinkMs * (0.5 + next()))
      const message = { id: `u${i}`, role: "user", content: `Research topic ${i} of ${chatId}`, timestamp: Date.now() }
      const first = performance.now()
      for (;;) {
        const started = performance.now()
        const response = await post(base, "/api/agent/chat", { chatId, messages: [message] })
        const text = await response.text()
        if (response.status === 409) {
          retries409++
          await sleep(5)
          continue
        }
        if (response.status !== 200) throw new Error(`chat turn: ${response.status} ${text.slice(0, 200)}`)
        const answer = JSON.parse(text) as { jobs?: ReadonlyArray<unknown> }
        if ((answer.jobs ?? []).length !== 1) throw new Error(`the turn dispatched ${answer.jobs?.length ?? 0} jobs: ${text.slice(0, 200)}`)
        const now = performance.now()
        acks.push(now - started)
        acksWithRetries.push(now - first)
        break
      }
    }
  }))

  // Every job settles (done) once its wake turn completed.
  const deadline = Date.now() + 120_000
  let jobsByChat: Array<ReadonlyArray<Job>> = []
  for (;;) {
    jobsByChat = await Promise.all(chatIds.map((chatId) => getJson<{ jobs: ReadonlyArray<Job> }>(base, `/api/jobs?chatId=${chatId}`).then((r) => r.jobs)))
    if (jobsByChat.every((jobs) => jobs.length === perChat && jobs.every((j) => j.status !== "running"))) break
    if (Date.now() > deadline) break
    await sleep(100)
  }
  const seconds = (performance.now() - began) / 1000
  const cpuAfter = cpuMsOf(options.serverPid)

  const steerDelays: Array<number> = []
  let lost = 0
  let duplicated = 0
  for (const [c, chatId] of chatIds.entries()) {
    const { messages } = await getJson<{ messages: ReadonlyArray<Message> }>(base, `/api/chats/${chatId}/messages`)
    for (const job of jobsByChat[c] ?? []) {
      const steers = messages.filter((m) => m.metadata?.subagentResult?.jobId === job.id)
      if (steers.length === 0 || job.status !== "done") lost++
      if (steers.length > 1) duplicated += steers.length - 1
      const steer = steers[0]
      if (steer !== undefined && job.finishedAt !== undefined) steerDelays.push(steer.timestamp - Date.parse(job.finishedAt))
    }
    lost += Math.max(0, perChat - (jobsByChat[c]?.length ?? 0))
  }

  const ack = sorted(acks)
  const steer = sorted(steerDelays)
  return {
    jobs: chats * perChat,
    ackP50Ms: percentile(ack, 0.5),
    ackP99Ms: percentile(ack, 0.99),
    ackWithRetriesP99Ms: percentile(sorted(acksWithRetries), 0.99),
    steerP50Ms: steer.length === 0 ? Number.NaN : percentile(steer, 0.5),
    steerP99Ms: steer.length === 0 ? Number.NaN : percentile(steer, 0.99),
    lost,
    duplicated,
    retries409,
    seconds,
    serverCpuMsPerJob: cpuBefore === undefined || cpuAfter === undefined ? Number.NaN : (cpuAfter - cpuBefore) / (chats * perChat)
  }
}
