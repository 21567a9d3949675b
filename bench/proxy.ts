/**
 * Benchmark child: the baseline, a plain node:http pass-through proxy. Every
 * request goes to the upstream as it is (method, path, body and the content
 * headers) and the answer is streamed back; no parsing, no validation.
 *
 *   node bench/proxy.ts <upstream port> http     # node:http keep-alive Agent (the reference figure)
 *   node bench/proxy.ts <upstream port> undici   # undici Pool, the client the chat route's default transport uses
 *
 * Started by `bench/run.ts` with an IPC channel: reports `{ type: "ready", port }`
 * and exits when the parent goes away.
 */
import { Agent, createServer, request } from "node:http"
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { pipeline } from "node:stream/promises"
import { Pool } from "undici"

const upstreamPort = Number(process.argv[2])
const client = process.argv[3] === "undici" ? "undici" : "http"
if (!Number.isInteger(upstreamPort) || upstreamPort <= 0) {
  console.error("usage: node bench/proxy.ts <upstream port> [http|undici]")
  process.exit(2)
}

/** Content headers only: hop-by-hop headers (connection, keep-alive, host) belong to each leg. */
const FORWARDED = ["content-type", "content-length", "authorization", "accept"] as const
const pick = (headers: IncomingHttpHeaders | Record<string, string | ReadonlyArray<string> | undefined>) => {
  const out: Record<string, string> = {}
  for (const name of FORWARDED) {
    const value = headers[name]
    if (typeof value === "string") out[name] = value
  }
  return out
}

const fail = (res: ServerResponse, error: unknown) => {
  if (!res.headersSent) {
    res.writeHead(502, { "content-type": "application/json" })
    res.end(JSON.stringify({ error: `proxy: ${String(error)}` }))
  } else {
    res.destroy()
  }
}

const viaHttpAgent = () => {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 })
  return (req: IncomingMessage, res: ServerResponse) => {
    const upstream = request({
      host: "127.0.0.1",
      port: upstreamPort,
      method: req.method,
      path: req.url,
      headers: pick(req.headers),
      agent
    }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, pick(answer.headers))
      answer.pipe(res)
    })
    upstream.on("error", (error) => fail(res, error))
    req.pipe(upstream)
  }
}

const viaUndiciPool = () => {
  const pool = new Pool(`http://127.0.0.1:${upstreamPort}`, { connections: 64 })
  // The body is read first and sent as one buffer, as the route's transport sends its JSON (a stream body is slower in undici).
  const readBody = async (req: IncomingMessage) => {
    const chunks: Array<Buffer> = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    return Buffer.concat(chunks)
  }
  return (req: IncomingMessage, res: ServerResponse) => {
    readBody(req)
      .then((body) => pool.request({ method: "POST", path: req.url ?? "/", headers: pick(req.headers), body }))
      .then(async (answer) => {
        res.writeHead(answer.statusCode, pick(answer.headers))
        await pipeline(answer.body, res)
      })
      .catch((error: unknown) => fail(res, error))
  }
}

const server = createServer(client === "undici" ? viaUndiciPool() : viaHttpAgent())
server.keepAliveTimeout = 120_000

process.on("disconnect", () => process.exit(0))
process.on("SIGTERM", () => process.exit(0))

server.listen(0, "127.0.0.1", () => {
  process.send?.({ type: "ready", port: (server.address() as AddressInfo).port })
})
