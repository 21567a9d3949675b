/**
 * What a held stream keeps alive, read from two V8 heap snapshots of the target: one after a short
 * warm-up, one with N streamed turns open (the provider fake is still sending their deltas). The
 * difference ÷ N is the live heap a stream holds; it is printed with the kinds of objects that make
 * it up (V8's own names: `system / Context` is a closure's captured scope, `array` a hash table or
 * other backing store), largest first. Memory targets are RSS (`bench/scale.ts`); this says what
 * the live part of it is.
 *
 *   npx node bench/held-streams.ts <relay|embedded|postgres> [N=1000]
 *
 * `postgres` uses a scratch database of `DATABASE_URL`'s PostgreSQL (created, and dropped at the
 * end). Build first (`npm run build`): the server is `dist/`, as `npm start` runs it. The snapshots
 * (~50–200 MB each) are written to a temporary folder and removed.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { burst } from "./burst.ts"
import { sleep, startHelper, startServer, stop } from "./processes.ts"
import { BENCH_MESSAGES } from "./requests.ts"
import { createScratchDatabase } from "./scratch.ts"

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))
const [target = "", nRaw = "1000"] = process.argv.slice(2)
const n = Number(nRaw)
const databaseUrl = process.env["DATABASE_URL"] || undefined
if (!["relay", "embedded", "postgres"].includes(target) || !Number.isInteger(n) || n < 1 || (target === "postgres" && databaseUrl === undefined)) {
  console.error("usage: npx node bench/held-streams.ts <relay|embedded|postgres> [N=1000]   (postgres: with DATABASE_URL)")
  process.exit(2)
}

interface HeapSnapshot {
  readonly snapshot: { readonly meta: { readonly node_fields: Array<string>; readonly node_types: [Array<string>, ...Array<unknown>] } }
  readonly nodes: Array<number>
  readonly strings: Array<string>
}

/** Self sizes by kind (V8's type, and the constructor's name for objects and closures), and their total. */
const kindsOf = (file: string) => {
  const heap = JSON.parse(readFileSync(file, "utf8")) as HeapSnapshot
  const fields = heap.snapshot.meta.node_fields
  const types = heap.snapshot.meta.node_types[0]
  const [typeAt, nameAt, sizeAt, width] = [fields.indexOf("type"), fields.indexOf("name"), fields.indexOf("self_size"), fields.length]
  const kinds = new Map<string, { count: number; bytes: number }>()
  let total = 0
  for (let i = 0; i < heap.nodes.length; i += width) {
    const type = types[heap.nodes[i + typeAt]!]!
    const named = type === "object" || type === "closure" || type === "native"
    const kind = named ? `${type} ${heap.strings[heap.nodes[i + nameAt]!]!.slice(0, 50)}` : type
    const bytes = heap.nodes[i + sizeAt]!
    const entry = kinds.get(kind) ?? { count: 0, bytes: 0 }
    entry.count++
    entry.bytes += bytes
    kinds.set(kind, entry)
    total += bytes
  }
  return { kinds, total }
}

const dir = mkdtempSync(join(tmpdir(), "held-streams-"))
const snapshotOptions = ["--heapsnapshot-signal=SIGUSR2", `--diagnostic-dir=${dir}`]
const scratch = target === "postgres" ? await createScratchDatabase(databaseUrl!, "switchboard_held_streams") : undefined
// Long turns: every stream is still open when the second snapshot is taken (~8 s into the burst).
const upstream = await startHelper("provider fake", here("./upstream.ts"), [], { ...process.env, STREAM_DELTAS: "400", STREAM_GAP_MS: "150" })
const started = target === "relay"
  ? await startHelper("SSE relay", here("./sse-relay.ts"), [String(upstream.port)], process.env, snapshotOptions)
  : await startServer({
    name: `server (${target})`,
    upstreamPort: upstream.port,
    databaseUrl: scratch?.url,
    env: { NODE_OPTIONS: snapshotOptions.join(" ") },
    unset: ["MAX_CONCURRENT_TURNS", "CHAT_RPM"]
  })
const snapshots = () => readdirSync(dir).filter((f) => f.endsWith(".heapsnapshot")).sort()
/** Asks for a snapshot and waits until V8 has written it whole (its size stops changing). */
const snapshot = async () => {
  const before = snapshots().length
  started.child.kill("SIGUSR2")
  while (snapshots().length <= before) await sleep(200)
  const file = join(dir, snapshots().at(-1)!)
  for (let last = -1, size = 0; size !== last || size === 0; await sleep(500)) {
    last = size
    size = statSync(file).size
  }
  return file
}
let seq = 0
const run = Date.now().toString(36)
const spec = (turns: number) => ({
  origin: `http://127.0.0.1:${started.port}`,
  path: "/api/agent/chat",
  turns,
  body: () => JSON.stringify({ chatId: `held-${run}-${++seq}`, messages: BENCH_MESSAGES }),
  headers: { "content-type": "application/json", accept: "text/event-stream" },
  deadlineMs: 120_000
})
try {
  // A few turns first, cut off early, so what the first turn loads and compiles is in both snapshots.
  await burst({ ...spec(20), deadlineMs: 3_000 })
  await sleep(1_000)
  const idle = await snapshot()
  const held = burst(spec(n))
  await sleep(8_000)
  const open = await snapshot()
  held.catch(() => {})
  const [a, b] = [kindsOf(idle), kindsOf(open)]
  console.log(`${target}: ${n} streams open; live heap ${(a.total / 1e6).toFixed(1)} → ${(b.total / 1e6).toFixed(1)} MB, ` +
    `${((b.total - a.total) / n / 1024).toFixed(1)} KB a stream. Largest kinds, a stream:`)
  const rows = [...b.kinds].map(([kind, { count, bytes }]) => {
    const was = a.kinds.get(kind) ?? { count: 0, bytes: 0 }
    return { kind, count: (count - was.count) / n, kb: (bytes - was.bytes) / n / 1024 }
  }).sort((x, y) => y.kb - x.kb)
  for (const row of rows.slice(0, 15)) {
    console.log(`  ${row.kb.toFixed(2).padStart(6)} KB  ${row.count.toFixed(1).padStart(6)} ×  ${row.kind}`)
  }
} finally {
  await stop(started.child)
  await stop(upstream.child)
  await scratch?.drop()
  rmSync(dir, { recursive: true, force: true })
}
process.exit(0)
