/**
 * The soak's replicas: the production build (`dist/server/src/main.js`,
 * started by `bench/processes.ts` as `npm start` runs it) on distinct loopback
 * ports over one PostgreSQL database. Each slot holds one replica at a time;
 * a kill or a graceful stop replaces its process (on a new port) and records
 * how it went: the exit status, how long the stop took, how long until every
 * replica answers `/readyz` and a turn again.
 */
import { readdirSync } from "node:fs"
import { alive, sleep, startServer, stop } from "../bench/processes.ts"
import type { ServerProcess } from "../bench/processes.ts"

export interface Replica {
  readonly slot: number
  server: ServerProcess
  /** False while the slot is being stopped or restarted: clients then send elsewhere. */
  up: boolean
  /** How many processes this slot has had (the first is 1). */
  generation: number
}

export interface Exit {
  readonly slot: number
  readonly pid: number
  /** The exit code, or the signal that ended the process (`SIGKILL` when a stop had to force it). */
  readonly status: string
  readonly stopMs: number
  readonly forced: boolean
}

/** Open file descriptors of a process (Linux), undefined when it is gone. */
export const fdCount = (pid: number | undefined): number | undefined => {
  if (pid === undefined) return undefined
  try {
    return readdirSync(`/proc/${pid}/fd`).length
  } catch {
    return undefined
  }
}

const exitOf = (server: ServerProcess, timeoutMs: number) =>
  new Promise<{ status: string; timedOut: boolean }>((resolve) => {
    const child = server.child
    const status = () => child.exitCode !== null ? String(child.exitCode) : String(child.signalCode)
    if (!alive(child)) return resolve({ status: status(), timedOut: false })
    const timer = setTimeout(() => resolve({ status: "still running", timedOut: true }), timeoutMs)
    child.once("exit", () => {
      clearTimeout(timer)
      resolve({ status: status(), timedOut: false })
    })
  })

export class Cluster {
  readonly replicas: Array<Replica> = []
  readonly exits: Array<Exit> = []
  #next = 0

  readonly name: string
  readonly spec: { readonly upstreamPort: number; readonly databaseUrl: string; readonly env: Readonly<Record<string, string>> }

  constructor(name: string, spec: Cluster["spec"]) {
    this.name = name
    this.spec = spec
  }

  #start = (slot: number) =>
    startServer({ name: `${this.name} replica ${slot + 1}`, upstreamPort: this.spec.upstreamPort, databaseUrl: this.spec.databaseUrl, env: this.spec.env })

  /** Starts the first replica (it runs the migrations alone), then the others together. */
  async start(count: number) {
    this.replicas.push({ slot: 0, server: await this.#start(0), up: true, generation: 1 })
    const others = await Promise.all(Array.from({ length: count - 1 }, (_, i) => this.#start(i + 1)))
    for (const [i, server] of others.entries()) this.replicas.push({ slot: i + 1, server, up: true, generation: 1 })
  }

  /** Round robin over the replicas that are up (undefined while none is). */
  pick(): string | undefined {
    for (let i = 0; i < this.replicas.length; i++) {
      const replica = this.replicas[(this.#next++) % this.replicas.length]!
      if (replica.up) return `http://127.0.0.1:${replica.server.port}`
    }
    return undefined
  }

  origins = () => this.replicas.filter((r) => r.up).map((r) => `http://127.0.0.1:${r.server.port}`)

  pids = () => this.replicas.map((r) => r.server.child.pid)

  fds = () => this.replicas.map((r) => fdCount(r.server.child.pid))

  /** SIGKILL, then a new process in the slot. Resolves once the new one answers `/readyz`. */
  async kill(slot: number) {
    const replica = this.replicas[slot]!
    replica.up = false
    const began = performance.now()
    replica.server.child.kill("SIGKILL")
    await exitOf(replica.server, 10_000)
    await stop(replica.server.child)
    replica.server = await this.#start(slot)
    replica.generation++
    replica.up = true
    return began
  }

  /**
   * SIGTERM (a graceful stop): waits up to `graceMs` for the process to end by
   * itself, then forces it; the exit status is recorded either way.
   */
  async terminate(slot: number, graceMs: number): Promise<Exit> {
    const replica = this.replicas[slot]!
    replica.up = false
    const pid = replica.server.child.pid ?? -1
    const began = performance.now()
    replica.server.child.kill("SIGTERM")
    let { status, timedOut } = await exitOf(replica.server, graceMs)
    if (timedOut) {
      replica.server.child.kill("SIGKILL")
      status = (await exitOf(replica.server, 5_000)).status
    }
    await stop(replica.server.child)
    const exit = { slot, pid, status, stopMs: performance.now() - began, forced: timedOut }
    this.exits.push(exit)
    return exit
  }

  /** A rolling restart's step: SIGTERM, then a new process in the slot. */
  async restart(slot: number, graceMs: number) {
    const exit = await this.terminate(slot, graceMs)
    const replica = this.replicas[slot]!
    replica.server = await this.#start(slot)
    replica.generation++
    replica.up = true
    return exit
  }

  /** Every replica stopped gracefully, their exits recorded. */
  async stopAll(graceMs: number) {
    await Promise.all(this.replicas.filter((r) => alive(r.server.child)).map((r) => this.terminate(r.slot, graceMs)))
  }
}

/**
 * Polls until every replica answers `/readyz` 200 and a turn (a fresh chat,
 * no job) succeeds on each, or `timeoutMs` passed; the time it took, from
 * `since`, or undefined when it did not recover.
 */
export const recovered = async (cluster: Cluster, since: number, probeChat: () => string, timeoutMs = 120_000) => {
  const deadline = performance.now() + timeoutMs
  const pending = new Set(cluster.replicas.map((r) => r.slot))
  while (performance.now() < deadline) {
    for (const slot of [...pending]) {
      const replica = cluster.replicas[slot]!
      if (!replica.up) continue
      const origin = `http://127.0.0.1:${replica.server.port}`
      try {
        const ready = await fetch(`${origin}/readyz`, { signal: AbortSignal.timeout(2_000) })
        await ready.arrayBuffer()
        if (!ready.ok) continue
        const turn = await fetch(`${origin}/api/agent/chat`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ chatId: probeChat(), messages: [{ id: "p1", role: "user", content: "hello", timestamp: Date.now() }] }),
          signal: AbortSignal.timeout(10_000)
        })
        await turn.arrayBuffer()
        if (turn.ok) pending.delete(slot)
      } catch {
        // not yet
      }
    }
    if (pending.size === 0) return performance.now() - since
    await sleep(100)
  }
  return undefined
}
