/**
 * The chat route's cases, on the server `main` starts: without a chatId against the node:http
 * pass-through (and its version on the server's stack), with a new chatId per request against the
 * one-INSERT proxy, and the server's peak memory under that load.
 */
import type { ChildProcess } from "node:child_process"
import { PROXY, STACK_PROXY, startInsertFloor } from "./floors.ts"
import { options } from "./options.ts"
import { interleaved, loadFor, phase } from "./phase.ts"
import type { Phase } from "./phase.ts"
import { peakRssMbOf, startHelper, stop } from "./processes.ts"
import type { ServerProcess } from "./processes.ts"
import { logPhase, pairsOf, phaseNotes, record, recordAgainstInsertFloor } from "./record.ts"
import { CHAT_BODY, checkChatAnswer, checkCompletion, COMPLETION_BODY, newChatBody } from "./requests.ts"

/** Chat route, no tools, no chatId, vs the node:http pass-through proxy; p50s over the direct mock. */
export const chatCase = async (upstream: { child: ChildProcess; port: number }, server: ServerProcess) => {
  console.log("\nchat route, no chatId — vs node:http pass-through proxy (and the mock called directly)")
  const proxy = await startHelper("pass-through proxy", PROXY, [String(upstream.port), "http"])
  const stackProxy = await startHelper("pass-through on the server's stack", STACK_PROXY, [String(upstream.port)])
  const direct = await loadFor("direct mock", { origin: `http://127.0.0.1:${upstream.port}`, path: "/v1/chat/completions", body: () => COMPLETION_BODY }, checkCompletion)
  const floor = await loadFor("pass-through proxy", { origin: `http://127.0.0.1:${proxy.port}`, path: "/v1/chat/completions", body: () => COMPLETION_BODY }, checkCompletion)
  const stack = await loadFor("pass-through on the server's stack", { origin: `http://127.0.0.1:${stackProxy.port}`, path: "/v1/chat/completions", body: () => COMPLETION_BODY }, checkCompletion)
  const route = await loadFor("chat route", { origin: `http://127.0.0.1:${server.port}`, path: "/api/agent/chat", body: () => CHAT_BODY }, checkChatAnswer)
  try {
    for (const [load, target] of [[direct, undefined], [floor, proxy.child], [stack, stackProxy.child], [route, server.child]] as const) {
      await phase(load, target, upstream.child, options.warmupMs)
    }
    const directs: Array<Phase> = []
    const floors: Array<Phase> = []
    const stacks: Array<Phase> = []
    const routes: Array<Phase> = []
    for (let i = 0; i < options.runs; i++) {
      console.log(`  run ${i + 1}/${options.runs}`)
      directs.push(await phase(direct, undefined, upstream.child, options.durationMs))
      logPhase("mock, direct        ", directs[i]!)
      floors.push(await phase(floor, proxy.child, upstream.child, options.durationMs))
      logPhase("pass-through proxy  ", floors[i]!)
      stacks.push(await phase(stack, stackProxy.child, upstream.child, options.durationMs))
      logPhase("pass-through, stack ", stacks[i]!)
      routes.push(await phase(route, server.child, upstream.child, options.durationMs))
      logPhase("chat route          ", routes[i]!)
    }
    const notes = [...phaseNotes("floor", floors), ...phaseNotes("route", routes)]
    record({
      id: "chat.throughput", name: "chat route, no tools: throughput", backend: "—", unit: "req/s",
      floorName: "node:http pass-through proxy", compare: "ratio",
      runs: pairsOf(routes.map((p) => p.result.rps), floors.map((p) => p.result.rps), "ratio"),
      target: ">= 0.7 × floor", holds: (vs) => vs >= 0.7, notes
    })
    record({
      id: "chat.p50added", name: "chat route, no tools: p50 added over the direct mock", backend: "—", unit: "ms",
      floorName: "pass-through proxy's p50 added", compare: "ratio",
      runs: pairsOf(
        routes.map((p, i) => p.result.p50 - directs[i]!.result.p50),
        floors.map((p, i) => p.result.p50 - directs[i]!.result.p50),
        "ratio"
      ),
      target: "<= 1.5 × floor", holds: (vs) => vs <= 1.5, notes: []
    })
    record({
      id: "chat.cpu", name: "chat route, no tools: CPU per request (server process)", backend: "—", unit: "µs",
      floorName: "pass-through proxy's CPU per request", compare: "ratio",
      runs: pairsOf(routes.map((p) => p.cpuUsPerRequest ?? Number.NaN), floors.map((p) => p.cpuUsPerRequest ?? Number.NaN), "ratio"),
      target: "(no target)", holds: () => undefined, notes: []
    })
    // What the stack costs before any of the route's own work (bench/stack-proxy.ts): informational.
    record({
      id: "chat.stack-throughput", name: "the pass-through written on the server's stack (HttpApi endpoint, schema'd body, the server's undici pool): throughput",
      backend: "—", unit: "req/s", floorName: "node:http pass-through proxy", compare: "ratio",
      runs: pairsOf(stacks.map((p) => p.result.rps), floors.map((p) => p.result.rps), "ratio"),
      target: "(no target)", holds: () => undefined, notes: phaseNotes("stack pass-through", stacks)
    })
    record({
      id: "chat.stack-cpu", name: "the pass-through written on the server's stack: CPU per request", backend: "—", unit: "µs",
      floorName: "pass-through proxy's CPU per request", compare: "ratio",
      runs: pairsOf(stacks.map((p) => p.cpuUsPerRequest ?? Number.NaN), floors.map((p) => p.cpuUsPerRequest ?? Number.NaN), "ratio"),
      target: "(no target)", holds: () => undefined, notes: []
    })
  } finally {
    await Promise.all([direct.close(), floor.close(), stack.close(), route.close()])
    await Promise.all([stop(proxy.child), stop(stackProxy.child)])
  }
}

/** Chat route with a new chatId per request (write-ahead turn) vs a proxy doing one INSERT per request. */
export const chatIdCase = async (
  upstream: { child: ChildProcess; port: number },
  server: ServerProcess,
  backend: "embedded" | "postgres"
) => {
  console.log(`\nchat route, new chatId per request (${backend}) — vs node:http proxy doing one INSERT per request`)
  const proxy = await startInsertFloor(upstream.port, backend, "chatid")
  const floor = await loadFor("one-INSERT proxy", { origin: `http://127.0.0.1:${proxy.port}`, path: "/v1/chat/completions", body: newChatBody }, checkCompletion)
  const route = await loadFor("chat route", { origin: `http://127.0.0.1:${server.port}`, path: "/api/agent/chat", body: newChatBody }, checkChatAnswer)
  try {
    recordAgainstInsertFloor(
      { id: "chatid", name: "chat route, new chatId per request", backend, p99: { target: "(no target)", holds: () => undefined } },
      await interleaved(upstream.child, [floor, proxy.child, "one-INSERT proxy"], [route, server.child, "chat route"])
    )
    return peakRssMbOf(proxy.child.pid)
  } finally {
    await Promise.all([floor.close(), route.close()])
    await stop(proxy.child)
  }
}

/** Peak RSS of the server under the chat-route load; on PGlite against PGlite's own footprint (the one-INSERT proxy). */
export const memoryCase = (server: ServerProcess, backend: "embedded" | "postgres", pgliteAloneMb: number | undefined) => {
  const peak = peakRssMbOf(server.child.pid) ?? Number.NaN
  if (backend === "embedded") {
    const floor = pgliteAloneMb ?? Number.NaN
    record({
      id: "memory.embedded", name: "server memory: peak RSS under the chat-route load", backend, unit: "MB",
      floorName: "PGlite alone (the one-INSERT proxy, same load)", compare: "added",
      runs: [{ figure: peak, floor, vs: peak - floor }],
      target: "<= floor + 100 MB", holds: (vs) => vs <= 100, notes: []
    })
  } else {
    record({
      id: "memory.postgres", name: "server memory: peak RSS under the chat-route load", backend, unit: "MB",
      floorName: "—", compare: "none",
      runs: [{ figure: peak, floor: Number.NaN, vs: Number.NaN }],
      target: "<= 200 MB", holds: (_vs, figure) => figure <= 200, notes: []
    })
  }
}
