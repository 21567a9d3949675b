/** `npm run soak -- …`: the command line, read once (`--help` prints the usage; a bad value exits 2 saying why). */
import { parseArgs } from "node:util"
import type { PhaseName } from "./report.ts"

export const PHASES = ["kills", "db", "faults", "sigterm"] as const satisfies ReadonlyArray<PhaseName>

export const readOptions = () => {
  // `--db-restart` alone (no value) is how most will write it: parseArgs wants a value for a string option.
  const argv = process.argv.slice(2).map((arg) => arg === "--db-restart" ? "--db-restart=on" : arg)
  const OPTIONS = {
    phases: { type: "string" },
    duration: { type: "string" },
    chats: { type: "string" },
    hosts: { type: "string" },
    replicas: { type: "string" },
    "db-restart": { type: "string" },
    "no-db-restart": { type: "boolean" },
    logs: { type: "string" },
    quick: { type: "boolean" },
    help: { type: "boolean" }
  } as const
  const flags = (() => {
    try {
      return parseArgs({ args: argv, options: OPTIONS }).values
    } catch (error) {
      console.error(`${error instanceof Error ? error.message : String(error)} (npm run soak -- --help)`)
      process.exit(2)
    }
  })()

  if (flags.help === true) {
    console.log(
      "usage: npm run soak -- [--phases=kills,db,faults,sigterm] [--duration=S] [--chats=50] [--hosts=30] [--replicas=3]\n" +
        "       [--db-restart[=force] | --no-db-restart] [--logs=DIR] [--quick]"
    )
    process.exit(0)
  }


  const positive = (raw: string | undefined, name: string, fallback: number) => {
    if (raw === undefined) return fallback
    const n = Number(raw)
    if (!Number.isInteger(n) || n <= 0) {
      console.error(`invalid --${name}=${JSON.stringify(raw)}: expected a positive integer`)
      process.exit(2)
    }
    return n
  }

  const quick = flags.quick === true
  const phases = (flags.phases ?? (quick ? "kills" : PHASES.join(","))).split(",").map((s) => s.trim()) as Array<PhaseName>
  for (const p of phases) {
    if (!PHASES.includes(p)) {
      console.error(`unknown phase ${JSON.stringify(p)} in --phases (known: ${PHASES.join(", ")})`)
      process.exit(2)
    }
  }
  const DEFAULT_SECONDS: Record<PhaseName, number> = quick
    ? { kills: 40, db: 30, faults: 30, sigterm: 30 }
    : { kills: 150, db: 60, faults: 90, sigterm: 90 }
  const durationOverride = flags.duration === undefined ? undefined : positive(flags.duration, "duration", 0)
  const options = {
    chats: positive(flags.chats, "chats", quick ? 10 : 50),
    hosts: positive(flags.hosts, "hosts", quick ? 6 : 30),
    replicas: positive(flags.replicas, "replicas", 3),
    seconds: (p: PhaseName) => durationOverride ?? DEFAULT_SECONDS[p],
    dbRestart: flags["no-db-restart"] === true ? "off" : flags["db-restart"] === "force" ? "force" : "auto",
    logs: flags.logs
  }
  return { options, phases, quick }
}
