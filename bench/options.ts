/**
 * The command line of `npm run bench` (documented at the top of `run.ts`), parsed once, when this
 * module is first imported: a wrong option stops the run before anything is started or built.
 */
import { parseArgs } from "node:util"
import { SCALE_NS } from "./scale.ts"

const { values: flags } = parseArgs({
  options: {
    quick: { type: "boolean" },
    duration: { type: "string" },
    warmup: { type: "string" },
    runs: { type: "string" },
    concurrency: { type: "string" },
    conversations: { type: "string" },
    decisions: { type: "string" },
    only: { type: "string" },
    "cpu-prof": { type: "string" },
    "server-env": { type: "string", multiple: true },
    backends: { type: "string" },
    "think-ms": { type: "string" },
    "scale-n": { type: "string" },
    help: { type: "boolean", short: "h" }
  },
  strict: true
})

if (flags.help === true) {
  console.log(
    "usage: npm run bench -- [--quick] [--duration=s] [--warmup=s] [--runs=n] [--concurrency=n] [--conversations=n] " +
      "[--only=chat,chatid,stream,planner,retention,orchestrator,jobs,console,scale,users] [--decisions=n] [--cpu-prof=DIR] [--server-env=NAME=VALUE] " +
        "[--backends=embedded,postgres] [--think-ms=n] [--scale-n=500,1000,2000]"
  )
  process.exit(0)
}

const numberOption = (raw: string | undefined, name: string, fallback: number, integer: boolean): number => {
  if (raw === undefined || raw === "") return fallback
  const n = Number(raw)
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    console.error(`invalid --${name}=${JSON.stringify(raw)}: expected a positive ${integer ? "integer" : "number"}`)
    process.exit(2)
  }
  return n
}

const quick = flags.quick === true
/** A comma-separated option's names, each one of `known` (else the run stops naming it), in `known`'s order. */
const namesOption = <N extends string>(raw: string, option: string, what: string, known: ReadonlyArray<N>): Array<N> => {
  const names = raw.split(",").map((s) => s.trim())
  for (const name of names) {
    if (!(known as ReadonlyArray<string>).includes(name)) {
      console.error(`unknown ${what} ${JSON.stringify(name)} in --${option} (known: ${known.join(", ")})`)
      process.exit(2)
    }
  }
  return known.filter((name) => names.includes(name))
}

const CASES = ["chat", "chatid", "stream", "planner", "retention", "orchestrator", "jobs", "console", "scale", "users"] as const
const only: ReadonlyArray<string> = flags.only === undefined ? [...CASES] : namesOption(flags.only, "only", "case", CASES)

export const options = {
  quick,
  durationMs: numberOption(flags.duration, "duration", quick ? 2 : 10, false) * 1000,
  warmupMs: numberOption(flags.warmup, "warmup", quick ? 3 : 5, false) * 1000,
  runs: numberOption(flags.runs, "runs", 3, true),
  concurrency: numberOption(flags.concurrency, "concurrency", 32, true),
  conversations: numberOption(flags.conversations, "conversations", 500, true),
  warmupConversations: quick ? 300 : 500,
  decisions: numberOption(flags.decisions, "decisions", quick ? 100_000 : 1_000_000, true),
  cases: only,
  cpuProfDir: flags["cpu-prof"],
  thinkMs: flags["think-ms"] === "0" ? 0 : numberOption(flags["think-ms"], "think-ms", 250, false),
  scaleNs: (() => {
    const ns = (flags["scale-n"] ?? "").split(",").map((n) => n.trim()).filter((n) => n !== "")
    return ns.length === 0 ? (quick ? [250] : [...SCALE_NS]) : ns.map((n) => numberOption(n, "scale-n", 0, true))
  })(),
  serverEnv: Object.fromEntries((flags["server-env"] ?? []).map((pair) => {
    const at = pair.indexOf("=")
    if (at <= 0) {
      console.error(`invalid --server-env=${JSON.stringify(pair)}: expected NAME=VALUE`)
      process.exit(2)
    }
    return [pair.slice(0, at), pair.slice(at + 1)]
  }))
}

// The servers' databases: the embedded one, and PostgreSQL with DATABASE_URL (a scratch database of it, `postgres.ts`)
export const databaseUrl = process.env["DATABASE_URL"] || undefined

const BACKENDS = ["embedded", "postgres"] as const
export const backends = flags.backends === undefined
  ? BACKENDS.filter((b) => b === "embedded" || databaseUrl !== undefined)
  : namesOption(flags.backends, "backends", "backend", BACKENDS)
if (backends.includes("postgres") && databaseUrl === undefined) {
  console.error("--backends=postgres needs DATABASE_URL (a PostgreSQL the run may create a scratch database in)")
  process.exit(2)
}
