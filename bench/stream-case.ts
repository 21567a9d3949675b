/**
 * The stream case: streamed, persisted turns, latency and CPU per delta, against a bare node:http
 * SSE relay of the same stream; and the server's peak memory meanwhile, against the chatid case's.
 */
import type { ChildProcess } from "node:child_process"
import { SSE_RELAY, STACK_SSE_RELAY } from "./floors.ts"
import type { Target } from "./load.ts"
import { options } from "./options.ts"
import { interleaved, loadFor, phase } from "./phase.ts"
import type { Phase } from "./phase.ts"
import { peakRssMbOf, resetPeakRss, startHelper, stop } from "./processes.ts"
import type { ServerProcess } from "./processes.ts"
import { cpuUsPerEvent, fmt, logPhase, median, pairsOf, phaseNotes, record } from "./record.ts"
import { BENCH_MESSAGES, newChatBody } from "./requests.ts"
import { completionDeltaReader, deltaReader } from "./sse.ts"

const STREAM_HEADERS = { accept: "text/event-stream" }
const NO_CHAT_BODY = JSON.stringify({ messages: BENCH_MESSAGES })
const STREAM_COMPLETION_BODY = JSON.stringify({ model: "bench", messages: [{ role: "user", content: "hello" }], stream: true })
const checkStream = (status: number, text: string) =>
  status === 200 && text.includes(`"type":"text-delta"`) && !text.includes(`"type":"error"`) && text.endsWith("data: [DONE]\n\n")
    ? undefined
    : "expected 200 with text-delta chunks, no error chunk, and [DONE] last"

/**
 * Streamed turns (`Accept: text/event-stream`), a new chatId per turn (persisted, as production),
 * `--concurrency` at once; the mock streams 50 deltas 20 ms apart, each stamped with its send time
 * (`bench/upstream.ts`). Per delta: its latency from the mock's write to the load generator's read,
 * and the server's CPU per delta delivered, each against a bare node:http SSE relay of the same
 * stream (`bench/sse-relay.ts`). And the server's peak RSS during this case (its peak started over
 * when the case begins) against its peak through the chatid case, when that ran in this run.
 * Two diagnostic phases follow the pairs, as notes: the harness alone (the mock read directly) and
 * the same turns without a chatId (nothing stored), which parts the transcript's cost from the rest.
 */
export const streamCase = async (
  upstream: { child: ChildProcess; port: number },
  server: ServerProcess,
  backend: "embedded" | "postgres",
  chatIdPeakMb: number | undefined
) => {
  console.log(`
streamed turns, new chatId per turn (${backend}): the mock's 50 deltas 20 ms apart — vs a node:http SSE relay`)
  const peakReset = resetPeakRss(server.child.pid)
  const relay = await startHelper("SSE relay", SSE_RELAY, [String(upstream.port)])
  const stackRelay = await startHelper("SSE relay on the server's stack", STACK_SSE_RELAY, [String(upstream.port)])
  const streamed = (port: number): Target => ({
    origin: `http://127.0.0.1:${port}`,
    path: "/api/agent/chat",
    body: newChatBody,
    headers: () => STREAM_HEADERS,
    reader: deltaReader
  })
  const floor = await loadFor("SSE relay", streamed(relay.port), checkStream)
  const stack = await loadFor("SSE relay on the server's stack", streamed(stackRelay.port), checkStream)
  const route = await loadFor("streamed chat route", streamed(server.port), checkStream)
  // The same turns without a chatId (nothing stored, no chat marker): how much of the route's cost is the transcript's.
  const unstored = await loadFor("streamed chat route, no chatId", { ...streamed(server.port), body: () => NO_CHAT_BODY }, checkStream)
  const alone = await loadFor(
    "the mock, read directly",
    { origin: `http://127.0.0.1:${upstream.port}`, path: "/v1/chat/completions", body: () => STREAM_COMPLETION_BODY, reader: completionDeltaReader },
    (status, text) => (status === 200 && text.endsWith("data: [DONE]\n\n") ? undefined : "expected 200 with an event stream ending [DONE]")
  )
  try {
    const { floors, routes, extras } = await interleaved(
      upstream.child,
      [floor, relay.child, "SSE relay"],
      [route, server.child, "streamed chat route"],
      [stack, stackRelay.child, "SSE relay, server's stack"]
    )
    const stacks = extras[0]!
    // The harness alone (no process between the mock and the load generator): what of the latency is
    // the machine's and the harness's, whatever the target (docs/performance.md).
    await phase(alone, undefined, upstream.child, options.warmupMs)
    const harness = await phase(alone, undefined, upstream.child, options.durationMs)
    logPhase("the mock, read directly (no target)", harness)
    await phase(unstored, server.child, upstream.child, options.warmupMs)
    const withoutChat = await phase(unstored, server.child, upstream.child, options.durationMs)
    logPhase("streamed chat route, no chatId (nothing stored)", withoutChat)
    const waited = (phases: ReadonlyArray<Phase>, of: (p: Phase) => number | undefined) => fmt(median(phases.map((p) => of(p) ?? Number.NaN)))
    const peak = peakRssMbOf(server.child.pid) ?? Number.NaN
    const p99s = (phases: ReadonlyArray<Phase>) => phases.map((p) => p.result.events?.p99 ?? Number.NaN)
    const p50s = (phases: ReadonlyArray<Phase>) => phases.map((p) => p.result.events?.p50 ?? Number.NaN)
    const delivered = (phases: ReadonlyArray<Phase>) => fmt(median(phases.map((p) => p.result.events?.count ?? Number.NaN)))
    record({
      id: `stream.p99.${backend}`, name: "streamed turn: p99 latency per delta (the mock's write → the client's read)", backend, unit: "ms",
      floorName: "node:http SSE relay", compare: "added",
      runs: pairsOf(p99s(routes), p99s(floors), "added"),
      target: "<= 5 ms", holds: (_vs, figure) => figure <= 5,
      notes: [
        `deltas delivered per measured phase (median): server ${delivered(routes)}, relay ${delivered(floors)}`,
        `the harness alone (the load generator reading the mock's stream, no target between): p99 ${fmt(harness.result.events?.p99 ?? Number.NaN, 2)} ms, p50 ${fmt(harness.result.events?.p50 ?? Number.NaN, 2)} ms`,
        `the same turns without a chatId (nothing stored; one phase after the pairs): p99 ${fmt(withoutChat.result.events?.p99 ?? Number.NaN, 2)} ms, ` +
          `${fmt(cpuUsPerEvent(withoutChat), 1)} µs CPU/delta, ${fmt(cpuUsPerEvent(withoutChat) / median(floors.map(cpuUsPerEvent)), 2)} × the relay's median`,
        `waiting for a CPU per ${fmt(options.durationMs / 1000)} s phase (median; main thread ready to run, not running): ` +
          `server ${waited(routes, (p) => p.targetRunqueueMs)} ms, relay ${waited(floors, (p) => p.targetRunqueueMs)} ms; ` +
          `load generator ${waited(routes, (p) => p.selfRunqueueMs)} ms with the server, ${waited(floors, (p) => p.selfRunqueueMs)} ms with the relay`,
        ...phaseNotes("relay", floors),
        ...phaseNotes("route", routes)
      ]
    })
    record({
      id: `stream.p50.${backend}`, name: "streamed turn: p50 latency per delta", backend, unit: "ms",
      floorName: "node:http SSE relay", compare: "added",
      runs: pairsOf(p50s(routes), p50s(floors), "added"),
      target: "(no target)", holds: () => undefined, notes: []
    })
    record({
      id: `stream.cpu.${backend}`, name: "streamed turn: CPU per delta delivered (server process)", backend, unit: "µs",
      floorName: "SSE relay's CPU per delta", compare: "ratio",
      runs: pairsOf(routes.map(cpuUsPerEvent), floors.map(cpuUsPerEvent), "ratio"),
      target: "<= 2 × floor", holds: (vs) => vs <= 2, notes: []
    })
    // What the stack costs before any of the route's own work (bench/stack-sse-relay.ts): informational.
    record({
      id: `stream.stack-cpu.${backend}`, name: "the SSE relay written on the server's stack (HttpApi endpoint, ChatRequest schema, Readable body): CPU per delta",
      backend, unit: "µs", floorName: "SSE relay's CPU per delta", compare: "ratio",
      runs: pairsOf(stacks.map(cpuUsPerEvent), floors.map(cpuUsPerEvent), "ratio"),
      target: "(no target)", holds: () => undefined, notes: phaseNotes("stack relay", stacks)
    })
    if (chatIdPeakMb === undefined) {
      record({
        id: `stream.memory.${backend}`, name: "server memory: peak RSS during the streamed turns", backend, unit: "MB",
        floorName: "—", compare: "none",
        runs: [{ figure: peak, floor: Number.NaN, vs: Number.NaN }],
        target: "(compared with chatid's when both run)", holds: () => undefined, notes: []
      })
    } else {
      record({
        id: `stream.memory.${backend}`, name: "server memory: peak RSS during the streamed turns", backend, unit: "MB",
        floorName: "the same server's peak through the chatid case", compare: "added",
        runs: [{ figure: peak, floor: chatIdPeakMb, vs: peak - chatIdPeakMb }],
        target: "<= floor + 20 MB", holds: (vs) => vs <= 20,
        notes: peakReset ? [] : ["could not start the peak RSS over (/proc/<pid>/clear_refs): the figure is the peak since the server started"]
      })
    }
  } finally {
    await Promise.all([floor.close(), stack.close(), route.close(), alone.close(), unstored.close()])
    await Promise.all([stop(relay.child), stop(stackRelay.child)])
  }
}
