/**
 * The cases of what runs on the client's side: the console's first paint in a browser (`console.ts`)
 * and the client library's `run()` loop (`orchestrator.ts`, a child process of its own).
 */
import type { ChildProcess } from "node:child_process"
import { fileURLToPath } from "node:url"
import { firstLoadOf } from "../scripts/build.ts"
import { consoleLoads } from "./console.ts"
import { options } from "./options.ts"
import { ask, startHelper, stop } from "./processes.ts"
import type { ServerProcess } from "./processes.ts"
import { fmt, median, pairsOf, record } from "./record.ts"

const ORCHESTRATOR = fileURLToPath(new URL("./orchestrator.ts", import.meta.url))

/** The console's first paint in headless Chromium, fresh contexts (docs/console.md). */
export const consoleCase = async (server: ServerProcess) => {
  const loads = options.quick ? 5 : 15
  const firstLoad = firstLoadOf()
  console.log(`\nthe console: the chat's first paint in headless Chromium, ${loads} loads in fresh contexts (first-load JavaScript ${fmt(firstLoad.gzipBytes / 1024, 1)} KB gzipped)`)
  const results = await consoleLoads(`http://127.0.0.1:${server.port}/`, loads)
  const paints = results.map((r) => r.firstPaintMs)
  const ready = results.map((r) => r.chatReadyMs)
  console.log(`  first paint: median ${fmt(median(paints), 0)} ms, max ${fmt(Math.max(...paints), 0)} ms; composer in the page: median ${fmt(median(ready), 0)} ms`)
  record({
    id: "console.firstPaint", name: "console: the chat's first paint (headless Chromium, fresh context)", backend: "embedded", unit: "ms",
    floorName: "—", compare: "none",
    runs: [{ figure: median(paints), floor: Number.NaN, vs: Number.NaN }],
    target: "<= 1000 ms", holds: (_vs, figure) => figure <= 1000,
    notes: [`${loads} loads; max ${fmt(Math.max(...paints), 0)} ms; the composer in the page at a median ${fmt(median(ready), 0)} ms; first-load JavaScript ${fmt(firstLoad.gzipBytes / 1024, 1)} KB gzipped (target 250 KB)`]
  })
}

/** The promise API's loop vs a hand-written fetch loop: CPU per step. */
export const orchestratorCase = async (upstream: { child: ChildProcess; port: number }) => {
  console.log(`\norchestrator loop: 3 tool rounds + answer, ${options.conversations} conversations one at a time — vs a hand-written fetch loop`)
  const child = await startHelper(
    "orchestrator",
    ORCHESTRATOR,
    [String(upstream.port), String(options.conversations), String(options.warmupConversations), String(options.runs)],
    process.env,
    options.cpuProfDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${options.cpuProfDir}`, "--cpu-prof-name=orchestrator.cpuprofile"]
  )
  try {
    const message = await ask<{ runs: Array<{ floorUsPerStep: number; caseUsPerStep: number; floorMs: number; caseMs: number }> }>(
      child.child, { type: "start" }, "result", 600_000
    )
    for (const [i, r] of message.runs.entries()) {
      console.log(
        `  run ${i + 1}/${message.runs.length}: fetch loop ${fmt(r.floorUsPerStep)} µs/step (${fmt(r.floorMs)} ms), ` +
          `run() ${fmt(r.caseUsPerStep)} µs/step (${fmt(r.caseMs)} ms)`
      )
    }
    record({
      id: "orchestrator.cpu", name: "orchestrator loop (`run()`): CPU per step", backend: "—", unit: "µs",
      floorName: "hand-written fetch loop", compare: "added",
      runs: pairsOf(message.runs.map((r) => r.caseUsPerStep), message.runs.map((r) => r.floorUsPerStep), "added"),
      target: "<= floor + 150 µs", holds: (vs) => vs <= 150, notes: []
    })
  } finally {
    await stop(child.child)
  }
}
