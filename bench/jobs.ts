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
 * Each chat sends its 10 turns one after another (a turn answered 409 while a
 * wake turn holds the chat is sent again); the 20 chats run concurrently.
 */
import { percentile } from "./load.ts"
import { sleep } from "./processes.ts"

export interface JobsFigures {
  readonly jobs: number
  readonly ackP50Ms: number
  readonly ackP99Ms: number
  readonly steerP50Ms: number
  readonly steerP99Ms: number
  readonly lost: number
  readonly duplicated: number
  readonly retries409: number
  readonly seconds: number
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

const sorted = (values: ReadonlyArray<number>) => Float64Array.from(values).sort()

export const jobsCase = async (port: number, options: { readonly chats?: number; readonly perChat?: number } = {}): Promise<JobsFigures> => {
  const base = `http://127.0.0.1:${port}`
  const chats = options.chats ?? 20
  const perChat = options.perChat ?? 10
  const run = Date.now().toString(36)
  const acks: Array<number> = []
  let retries409 = 0
  const began = performance.now()

  const chatIds = Array.from({ length: chats }, (_, c) => `bench-jobs-${run}-${c}`)
  await Promise.all(chatIds.map(async (chatId) => {
    for (let i = 0; i < perChat; i++) {
      const message = { id: `u${i}`, role: "user", content: `Research topic ${i} of ${chatId}`, timestamp: Date.now() }
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
        acks.push(performance.now() - started)
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
    steerP50Ms: steer.length === 0 ? Number.NaN : percentile(steer, 0.5),
    steerP99Ms: steer.length === 0 ? Number.NaN : percentile(steer, 0.99),
    lost,
    duplicated,
    retries409,
    seconds
  }
}
