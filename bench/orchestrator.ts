/**
 * Benchmark child: the orchestrator case. One conversation at a time against
 * the upstream's instant fake chat route (3 tool rounds, then the answer: 4
 * chat calls, "steps", per conversation), two ways:
 *
 *   - case:  `run()` of `@switchboard/cli`, the promise API over the Effect orchestrator;
 *   - floor: a hand-written `fetch` loop making the same calls with the same bodies.
 *
 * Both use the platform's `fetch` and the same instant `lookup` tool. After a
 * warm-up of each, `runs` interleaved pairs (floor, then case) are measured:
 * CPU of this process (`process.cpuUsage`, user + system) per step.
 *
 *   npx node bench/orchestrator.ts <fake port> <conversations> <warm-up conversations> <runs>
 *
 * Reports `{ type: "result", runs: [{ floorUsPerStep, caseUsPerStep, floorMs, caseMs }] }` over IPC.
 */
import { closeRunClients, run } from "@switchboard/client"
import type { RunTool } from "@switchboard/client"
import { randomUUID } from "node:crypto"
import { performance } from "node:perf_hooks"

const [port, conversations, warmup, runs] = process.argv.slice(2, 6).map(Number) as [number, number, number, number]
const url = `http://127.0.0.1:${port}/api/agent/chat`
const STEPS_PER_CONVERSATION = 4
const context = { projectId: "bench", activeSceneId: null, mediaAssets: [], playbackTimeMs: 0 }

const lookupResult = (args: Readonly<Record<string, unknown>>) => `found ${String(args["q"])}`
const tools: ReadonlyArray<RunTool> = [{
  name: "lookup",
  description: "looks a word up",
  parameters: [{ key: "q", type: "string", required: true }],
  execute: lookupResult
}]

interface WireMessage {
  id: string
  role: "user" | "assistant" | "tool"
  content: string
  timestamp: number
  toolCalls?: ReadonlyArray<{ id: string; name: string; args: Record<string, unknown> }>
  toolResult?: { toolCallId: string; name: string; result: unknown }
}

/** The floor: what an app developer would write by hand against the chat route. */
const fetchLoop = async () => {
  const chatId = `chat_${randomUUID()}`
  const messages: Array<WireMessage> = [{ id: randomUUID(), role: "user", content: "look three things up", timestamp: Date.now() }]
  for (let step = 0; step < 8; step++) {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages, context, chatId })
    })
    if (!response.ok) throw new Error(`HTTP ${response.status}`)
    const answer = await response.json() as { content: string; toolCalls?: WireMessage["toolCalls"]; messageId: string }
    const toolCalls = answer.toolCalls ?? []
    if (toolCalls.length === 0) {
      messages.push({ id: answer.messageId, role: "assistant", content: answer.content, timestamp: Date.now() })
      return messages
    }
    messages.push({ id: answer.messageId, role: "assistant", content: answer.content, toolCalls, timestamp: Date.now() })
    for (const call of toolCalls) {
      const result = lookupResult(call.args)
      messages.push({
        id: randomUUID(),
        role: "tool",
        content: result,
        toolResult: { toolCallId: call.id, name: call.name, result },
        timestamp: Date.now()
      })
    }
  }
  return messages
}

const viaRun = async () => {
  // Answers whole, as the floor's: the case measures the loop over the JSON route, like for like.
  const messages = await run([{ role: "user", content: "look three things up" }], context, {
    serverUrl: `http://127.0.0.1:${port}`,
    tools,
    streaming: false
  })
  if (messages.length !== 7) throw new Error(`expected 7 messages, got ${messages.length}`)
  return messages
}

const measure = async (conversation: () => Promise<unknown>, count: number) => {
  const cpu = process.cpuUsage()
  const t0 = performance.now()
  for (let i = 0; i < count; i++) await conversation()
  const elapsedMs = performance.now() - t0
  const used = process.cpuUsage(cpu)
  return { usPerStep: (used.user + used.system) / (count * STEPS_PER_CONVERSATION), elapsedMs }
}

const main = async () => {
  await measure(fetchLoop, warmup)
  await measure(viaRun, warmup)
  const results: Array<{ floorUsPerStep: number; caseUsPerStep: number; floorMs: number; caseMs: number }> = []
  for (let i = 0; i < runs; i++) {
    const floor = await measure(fetchLoop, conversations)
    const measured = await measure(viaRun, conversations)
    results.push({ floorUsPerStep: floor.usPerStep, caseUsPerStep: measured.usPerStep, floorMs: floor.elapsedMs, caseMs: measured.elapsedMs })
  }
  await closeRunClients()
  return results
}

// Started by `bench/run.ts`: ready at once, measures on `{ type: "start" }`, exits when the parent goes away.
process.on("disconnect", () => process.exit(0))
process.on("SIGTERM", () => process.exit(0))
process.on("message", (message: unknown) => {
  if ((message as { type?: unknown } | null)?.type !== "start") return
  main().then(
    (results) => process.send?.({ type: "result", runs: results }),
    (error: unknown) => {
      console.error(`orchestrator case failed: ${error instanceof Error ? error.stack : String(error)}`)
      process.exit(1)
    }
  )
})
process.send?.({ type: "ready", port: port })
