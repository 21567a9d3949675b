/**
 * Benchmark child: the floors, plain node:http proxies. Every request goes to
 * the upstream as it is (method, path, body and the content headers) and the
 * answer is streamed back; no parsing, no validation.
 *
 *   npx node bench/proxy.ts <upstream port> http     # pass-through, node:http keep-alive Agent (the chat route's floor)
 *   npx node bench/proxy.ts <upstream port> undici   # pass-through, undici Pool (the client the route's transport uses)
 *   npx node bench/proxy.ts <upstream port> insert   # one INSERT of the body per request, then the pass-through
 *
 * `insert` writes into the database the server under test uses: the
 * PostgreSQL of `BENCH_DATABASE_URL`, or else an embedded PGlite of its own in
 * `BENCH_DATA_DIR` (a file-backed one, as the server's), through the same
 * driver and socket path as the server (`@effect/sql-pg`; one connection on
 * PGlite, 10 on PostgreSQL). Its peak memory on PGlite is the footprint
 * of PGlite itself under that load.
 *
 * Started by `bench/run.ts` with an IPC channel: reports `{ type: "ready", port }`
 * and exits when the parent goes away.
 */
import { Agent, createServer, request } from "node:http"
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { pipeline } from "node:stream/promises"
import { PgClient } from "@effect/sql-pg"
// The module itself, not the server package's face: the floor must not load the server's modules
// (its memory is the embedded database's alone, the figure the server's is held to).
import { layerEmbeddedClient, startEmbeddedPg } from "../packages/server/src/db/EmbeddedPostgres.ts"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { Pool } from "undici"

const upstreamPort = Number(process.argv[2])
const mode = process.argv[3] === "undici" || process.argv[3] === "insert" ? process.argv[3] : "http"
if (!Number.isInteger(upstreamPort) || upstreamPort <= 0) {
  console.error("usage: npx node bench/proxy.ts <upstream port> [http|undici|insert]")
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

const agent = new Agent({ keepAlive: true, maxSockets: 64 })

/** Forwards a request through the keep-alive Agent: its body streamed, or `body` when it was read already. */
const forward = (req: IncomingMessage, res: ServerResponse, body?: Buffer) => {
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
  if (body === undefined) req.pipe(upstream)
  else upstream.end(body)
}

const viaHttpAgent = () => (req: IncomingMessage, res: ServerResponse) => forward(req, res)

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

/** The INSERT floor: the body stored as jsonb in one statement, then the pass-through. */
const withInsert = async () => {
  const databaseUrl = process.env["BENCH_DATABASE_URL"]
  const clientLayer = databaseUrl
    ? PgClient.layer({ url: Redacted.make(databaseUrl), maxConnections: 10 })
    : Layer.unwrap(Effect.map(startEmbeddedPg(process.env["BENCH_DATA_DIR"]), layerEmbeddedClient))
  // Never disposed: the process lives until the benchmark stops it, and its data directory is scratch.
  const runtime = ManagedRuntime.make(clientLayer)
  const sql = await runtime.runPromise(Effect.service(SqlClient.SqlClient))
  await runtime.runPromise(
    sql`CREATE TABLE IF NOT EXISTS bench_floor (id bigserial PRIMARY KEY, body jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`
  )
  return (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const body = Buffer.concat(chunks)
      runtime.runPromise(sql`INSERT INTO bench_floor (body) VALUES (${body.toString("utf8")}::jsonb)`).then(
        () => forward(req, res, body),
        (error: unknown) => fail(res, error)
      )
    })
  }
}

const handler = mode === "undici" ? viaUndiciPool() : mode === "insert" ? await withInsert() : viaHttpAgent()
const server = createServer(handler)
server.keepAliveTimeout = 120_000

process.on("disconnect", () => process.exit(0))
process.on("SIGTERM", () => process.exit(0))

server.listen(0, "127.0.0.1", () => {
  process.send?.({ type: "ready", port: (server.address() as AddressInfo).port })
})
