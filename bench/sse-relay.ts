/**
 * Benchmark child: the stream case's floor, a bare node:http SSE relay. It
 * takes the chat request the server takes (`{ chatId, messages }`), calls the
 * upstream with the last user message and `stream: true` (keep-alive Agent,
 * as the pass-through proxy), and relays each upstream delta as it arrives as
 * a UI message stream chunk — each upstream event parsed and its text
 * re-emitted (`text-delta`), between `start` and `finish` and `[DONE]`, the
 * shape the server answers. No database, no validation, no turn: what relaying
 * a provider's stream costs at the least.
 *
 *   node bench/sse-relay.ts <upstream port>
 *
 * Started by `bench/run.ts` with an IPC channel: reports `{ type: "ready", port }`
 * and exits when the parent goes away.
 */
import { Agent, createServer, request } from "node:http"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { sseEvents } from "./sse.ts"

const upstreamPort = Number(process.argv[2])
if (!Number.isInteger(upstreamPort) || upstreamPort <= 0) {
  console.error("usage: node bench/sse-relay.ts <upstream port>")
  process.exit(2)
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 })
const HEADERS = { "content-type": "text/event-stream", "cache-control": "no-cache", "x-vercel-ai-ui-message-stream": "v1" }
const event = (chunk: unknown) => `data: ${JSON.stringify(chunk)}\n\n`

let seq = 0

const relay = (res: ServerResponse, body: Buffer) => {
  const chat = JSON.parse(body.toString("utf8")) as { messages: ReadonlyArray<{ role: string; content: string }> }
  const last = chat.messages.findLast((m) => m.role === "user")
  const upstreamBody = JSON.stringify({
    model: "bench",
    messages: [{ role: "user", content: last?.content ?? "" }],
    stream: true,
    stream_options: { include_usage: true }
  })
  const id = `relay_${++seq}`
  const fail = (error: unknown) => {
    if (!res.headersSent) {
      res.writeHead(502, { "content-type": "application/json" })
      res.end(JSON.stringify({ error: `relay: ${String(error)}` }))
    } else {
      res.end(`${event({ type: "error", errorText: String(error) })}data: [DONE]\n\n`)
    }
  }
  const upstream = request({
    host: "127.0.0.1",
    port: upstreamPort,
    method: "POST",
    path: "/v1/chat/completions",
    headers: { "content-type": "application/json", accept: "text/event-stream", "content-length": String(Buffer.byteLength(upstreamBody)) },
    agent
  }, (answer) => {
    if (answer.statusCode !== 200) {
      answer.resume()
      return fail(`upstream HTTP ${answer.statusCode}`)
    }
    res.writeHead(200, HEADERS)
    res.write(event({ type: "start", messageId: id }) + event({ type: "text-start", id }))
    let usage: unknown
    answer.on("data", sseEvents((data) => {
      if (data === "[DONE]") return
      const chunk = JSON.parse(data) as { choices?: Array<{ delta?: { content?: string } }>; usage?: unknown }
      if (chunk.usage !== undefined && chunk.usage !== null) usage = chunk.usage
      const text = chunk.choices?.[0]?.delta?.content
      if (typeof text === "string" && text !== "") res.write(event({ type: "text-delta", id, delta: text }))
    }))
    answer.on("end", () => {
      res.end(event({ type: "text-end", id }) + event({ type: "finish", messageMetadata: { usage } }) + "data: [DONE]\n\n")
    })
    answer.on("error", fail)
  })
  upstream.on("error", fail)
  upstream.end(upstreamBody)
}

const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  const chunks: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => chunks.push(chunk))
  req.on("end", () => relay(res, Buffer.concat(chunks)))
})
server.keepAliveTimeout = 120_000

process.on("disconnect", () => process.exit(0))
process.on("SIGTERM", () => process.exit(0))

server.listen(0, "127.0.0.1", () => {
  process.send?.({ type: "ready", port: (server.address() as AddressInfo).port })
})
