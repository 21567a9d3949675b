/**
 * The benchmark's child processes: every one is tracked and killed on the way
 * out (Ctrl+C included), and measured from outside through Linux `/proc`
 * (CPU time, resident memory) so that measuring costs the measured nothing.
 */
import { execFileSync, fork, spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { BUILT_SERVER_MAIN } from "../scripts/build.ts"

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))
export const ROOT = here("../")

export const workDir = mkdtempSync(join(tmpdir(), "switchboard-bench-"))
const children = new Set<ChildProcess>()

/** Tracks a child; its errors (a failed send, a failed kill) surface where it is used, never as a crash. */
const track = (child: ChildProcess) => {
  children.add(child)
  child.on("error", () => {})
  return child
}

export const alive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null

const exited = (child: ChildProcess, timeoutMs: number) =>
  new Promise<boolean>((resolve) => {
    if (!alive(child)) return resolve(true)
    const timer = setTimeout(() => resolve(false), timeoutMs)
    child.once("exit", () => {
      clearTimeout(timer)
      resolve(true)
    })
  })

export const stop = async (child: ChildProcess) => {
  if (alive(child)) {
    child.kill("SIGTERM")
    if (!(await exited(child, 10_000))) {
      child.kill("SIGKILL")
      await exited(child, 2_000)
    }
  }
  children.delete(child)
}

export const stopAll = () => Promise.all([...children].map(stop))

process.on("exit", () => {
  for (const child of children) if (alive(child)) child.kill("SIGKILL")
  rmSync(workDir, { recursive: true, force: true })
})

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export interface Helper {
  readonly child: ChildProcess
  readonly port: number
}

/** A forked helper (`upstream.ts`, `proxy.ts`) that reports `{ type: "ready", port }` over IPC. */
export const startHelper = (
  name: string,
  file: string,
  args: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv = process.env,
  execArgv: ReadonlyArray<string> = []
) =>
  new Promise<Helper>((resolve, reject) => {
    const child = track(fork(file, [...args], { execPath: process.execPath, execArgv: [...execArgv], env, stdio: ["ignore", "inherit", "inherit", "ipc"] }))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`${name} did not start within 60 s`))
    }, 60_000)
    child.on("message", (message: unknown) => {
      const m = message as { type?: unknown; port?: unknown } | null
      if (m?.type === "ready" && typeof m.port === "number") {
        clearTimeout(timer)
        resolve({ child, port: m.port })
      }
    })
    child.once("exit", (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`${name} exited (${signal ?? code}) before it was ready`))
    })
  })

/** Sends `request` to a helper and waits for the first message of type `expect`. */
export const ask = <A>(child: ChildProcess, request: { readonly type: string }, expect: string, timeoutMs = 5_000) =>
  new Promise<A>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.off("message", onMessage)
      reject(new Error(`no ${expect} answer within ${timeoutMs} ms`))
    }, timeoutMs)
    const onMessage = (message: unknown) => {
      if ((message as { type?: unknown } | null)?.type === expect) {
        clearTimeout(timer)
        child.off("message", onMessage)
        resolve(message as A)
      }
    }
    if (!child.connected) {
      clearTimeout(timer)
      return reject(new Error("the helper is gone"))
    }
    child.on("message", onMessage)
    child.send(request, (error) => {
      if (error === null) return
      clearTimeout(timer)
      child.off("message", onMessage)
      reject(error)
    })
  })

/** Chat requests the upstream has served and connections it has accepted, so far. */
export const upstreamCount = (upstream: ChildProcess) =>
  ask<{ count: number; connections: number }>(upstream, { type: "count" }, "count").then((m) => ({
    requests: m.count,
    connections: m.connections
  }))

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer()
    probe.on("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })

export const tail = (file: string, lines: number) => {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n")
  } catch {
    return "(no log)"
  }
}

/** Variables the benchmark sets itself: never inherited from the caller's shell (a DATABASE_URL would leave PGlite). */
const OWN_VARIABLES = /^(LLM_.*|DATABASE_URL|CHAT_TOKEN|AUTH_.*|HOST|PORT|DATA_DIR|LOG_FORMAT|LOG_LEVEL|TRACING|BENCH_.*)$/

/** The caller's environment without the variables the benchmark decides. */
export const cleanEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) if (!OWN_VARIABLES.test(key)) env[key] = value
  return env
}

export interface ServerProcess {
  readonly child: ChildProcess
  readonly port: number
  readonly logFile: string
}

let serverCount = 0

/**
 * The real server, as `npm start` runs it (the build, `dist/server/src/main.js`;
 * `bench/run.ts` builds it first), in its own process, once it
 * answers `/healthz`: the openai-compatible provider pointed at `upstreamPort`,
 * its JSON log (default level, one line per request) written to a file as a
 * deployed server's would be, the database from `databaseUrl` or, without
 * one, embedded in a fresh `DATA_DIR`.
 */
export const startServer = async (spec: {
  readonly name: string
  readonly upstreamPort: number
  readonly databaseUrl?: string | undefined
  readonly cpuProfDir?: string | undefined
  readonly env?: Readonly<Record<string, string>>
  /** Variables the server must run without, whatever the caller's shell sets (a case measuring defaults). */
  readonly unset?: ReadonlyArray<string>
}): Promise<ServerProcess> => {
  const n = ++serverCount
  const port = await freePort()
  const logFile = join(workDir, `server-${n}.log`)
  const env = cleanEnv()
  Object.assign(env, {
    LLM_PROVIDER: "openai-compatible",
    LLM_MODEL: "bench",
    LLM_API_KEY: "bench",
    LLM_BASE_URL: `http://127.0.0.1:${spec.upstreamPort}/v1`,
    PORT: String(port),
    DATA_DIR: join(workDir, `data-${n}`),
    LOG_FORMAT: "json",
    ...(spec.databaseUrl === undefined ? {} : { DATABASE_URL: spec.databaseUrl }),
    ...spec.env
  })
  for (const name of spec.unset ?? []) delete env[name]
  const fd = openSync(logFile, "a")
  const profile = spec.cpuProfDir === undefined
    ? []
    : ["--cpu-prof", `--cpu-prof-dir=${resolve(spec.cpuProfDir)}`, `--cpu-prof-name=server-${n}.cpuprofile`]
  const child = track(spawn(process.execPath, [...profile, BUILT_SERVER_MAIN], { cwd: ROOT, env, stdio: ["ignore", fd, fd] }))
  closeSync(fd)

  const started = Date.now()
  while (Date.now() - started < 60_000) {
    if (!alive(child)) {
      children.delete(child)
      throw new Error(`${spec.name}: the server exited (${child.signalCode ?? child.exitCode}) before answering:\n${tail(logFile, 20)}`)
    }
    try {
      const response = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(1_000) })
      await response.arrayBuffer()
      if (response.ok) return { child, port, logFile }
    } catch {
      // not listening yet
    }
    await sleep(100)
  }
  await stop(child)
  throw new Error(`${spec.name}: not ready within 60 s:\n${tail(logFile, 20)}`)
}

/** Lines with level ERROR or FATAL in a server's JSON log. */
export const errorLines = (logFile: string) =>
  readFileSync(logFile, "utf8").split("\n").filter((line) => /"level":"(ERROR|FATAL)"/.test(line))

// ---------------------------------------------------------------------------
// CPU and memory of a process (Linux /proc; undefined elsewhere)

const CLK_TCK = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100
  } catch {
    return 100
  }
})()

/** utime + stime of a process, in ms. */
export const cpuMsOf = (pid: number | undefined): number | undefined => {
  if (pid === undefined) return undefined
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK
  } catch {
    return undefined
  }
}

/**
 * How long a process's main thread waited for a CPU while it was ready to run (the run queue,
 * `/proc/<pid>/task/<pid>/schedstat`, Linux with scheduler statistics), in ms: on a machine where
 * the load generator, the mock and the target share two cores, a delta's latency is partly this.
 */
export const runqueueMsOf = (pid: number | undefined): number | undefined => {
  if (pid === undefined) return undefined
  try {
    const [, waitNs] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").trim().split(" ")
    const ms = Number(waitNs) / 1e6
    return Number.isFinite(ms) ? ms : undefined
  } catch {
    return undefined
  }
}

/** Busy time of the whole machine (all cores, every process and the kernel), in ms. */
export const machineBusyMs = (): number | undefined => {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? ""
    // cpu  user nice system idle iowait irq softirq steal ...
    const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number)
    const busy = ticks.reduce((a, b) => a + b, 0) - (ticks[3] ?? 0) - (ticks[4] ?? 0)
    return (busy * 1000) / CLK_TCK
  } catch {
    return undefined
  }
}

/**
 * Connections the kernel turned away because a listener's accept queue was full, since boot, on the
 * whole machine (`ListenOverflows`, /proc/net/netstat): each a SYN its client sends again a second later.
 */
export const listenOverflows = (): number | undefined => {
  try {
    const lines = readFileSync("/proc/net/netstat", "utf8").split("\n")
    const at = lines.findIndex((line) => line.startsWith("TcpExt:"))
    const names = lines[at]?.split(" ") ?? []
    const values = lines[at + 1]?.split(" ") ?? []
    const value = Number(values[names.indexOf("ListenOverflows")])
    return at === -1 || !Number.isFinite(value) ? undefined : value
  } catch {
    return undefined
  }
}

/** Peak resident set size of a process since it started (`VmHWM`), in MB. */
export const peakRssMbOf = (pid: number | undefined): number | undefined => {
  if (pid === undefined) return undefined
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
    return match === null ? undefined : Number(match[1]) / 1024
  } catch {
    return undefined
  }
}

/** Resident set size of a process now (`VmRSS`), in MB. */
export const rssMbOf = (pid: number | undefined): number | undefined => {
  if (pid === undefined) return undefined
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
    return match === null ? undefined : Number(match[1]) / 1024
  } catch {
    return undefined
  }
}

/**
 * A process's peak RSS from now until `stop()`, and its RSS now. `VmHWM` alone is the peak of the
 * process's whole life (its start, an earlier load), so `VmRSS` is sampled every `everyMs`; where
 * the peak can be started over (`resetPeakRss`), `VmHWM` at the end catches what fell between two samples.
 */
export const watchPeakRss = (pid: number | undefined, everyMs = 100) => {
  const beforeMb = rssMbOf(pid) ?? Number.NaN
  const reset = resetPeakRss(pid)
  let peak = beforeMb
  const sample = () => {
    const now = rssMbOf(pid)
    if (now !== undefined && !(now <= peak)) peak = now
  }
  const timer = setInterval(sample, everyMs)
  return {
    beforeMb,
    stop: (): number => {
      clearInterval(timer)
      sample()
      const hwm = reset ? peakRssMbOf(pid) : undefined
      return hwm !== undefined && !(hwm <= peak) ? hwm : peak
    }
  }
}

/**
 * Starts a process's peak RSS over from its current RSS (`5` to `/proc/<pid>/clear_refs`, Linux 4.0+),
 * so that `peakRssMbOf` then answers the peak of what came after. False when it could not.
 */
export const resetPeakRss = (pid: number | undefined): boolean => {
  if (pid === undefined) return false
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5")
    return true
  } catch {
    return false
  }
}

export const selfCpuMs = () => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1000
}
