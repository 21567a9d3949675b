/**
 * Benchmark child: a minimal OpenAI-compatible upstream. `POST /v1/chat/completions`
 * is answered as soon as the request body has been read, with a fixed
 * ChatCompletion (one assistant message, content "ok", no tool calls).
 *
 * Started by `bench/run.ts` with an IPC channel: it reports `{ type: "ready", port }`,
 * answers `{ type: "count" }` with `{ type: "count", count, connections }` (chat
 * requests served and TCP connections accepted so far), and exits when the
 * parent goes away.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

const COMPLETION = Buffer.from(JSON.stringify({
  id: "chatcmpl-bench",
  object: "chat.completion",
  created: 1_700_000_000,
  model: "bench",
  choices: [{
    index: 0,
    finish_reason: "stop",
    logprobs: null,
    message: { role: "assistant", content: "ok", refusal: null }
  }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }
}))
const HEADERS = { "content-type": "application/json", "content-length": String(COMPLETION.length) }
const NOT_FOUND = JSON.stringify({ error: { message: "not found", type: "invalid_request_error", code: null } })

let served = 0
let connections = 0

const server = createServer((req, res) => {
  if (req.method === "POST" && req.url === "/v1/chat/completions") {
    req.resume()
    req.on("end", () => {
      served++
      res.writeHead(200, HEADERS)
      res.end(COMPLETION)
    })
    return
  }
  req.resume()
  res.writeHead(404, { "content-type": "application/json" })
  res.end(NOT_FOUND)
})
server.on("connection", () => connections++)
// Longer than any pause between benchmark phases: an idle pooled socket is never closed under a client.
server.keepAliveTimeout = 120_000

process.on("message", (message: unknown) => {
  if ((message as { type?: unknown } | null)?.type === "count") process.send?.({ type: "count", count: served, connections })
})
process.on("disconnect", () => process.exit(0))
process.on("SIGTERM", () => process.exit(0))

server.listen(0, "127.0.0.1", () => {
  process.send?.({ type: "ready", port: (server.address() as AddressInfo).port })
})
