/**
 * Benchmark child: the stream case's floor, a bare node:http SSE relay. It
 * takes the chat request the server takes (`{ chatId, messages }`), calls the
 * upstream with the last user message and `stream: true` (keep-alive Agent,
 * as the pass-through proxy), and relays each upstream delta as it arrives as
 * a UI message stream chunk (`relay.ts`: each upstream event parsed and its
 * text re-emitted as a `text-delta`, between `start` and `finish` and
 * `[DONE]`, the shape the server answers). No database, no validation, no
 * turn: what relaying a provider's stream costs at the least.
 *
 *   npx node bench/sse-relay.ts <upstream port>
 *
 * Started by `bench/run.ts` with an IPC channel: reports `{ type: "ready", port }`
 * and exits when the parent goes away.
 */
import { createServer } from "node:http"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { errorEvents, HEADERS, makeRelay } from "./relay.ts"

const upstreamPort = Number(process.argv[2])
if (!Number.isInteger(upstreamPort) || upstreamPort <= 0) {
  console.error("usage: npx node bench/sse-relay.ts <upstream port>")
  process.exit(2)
}

const relay = makeRelay(upstreamPort)

const answer = (res: ServerResponse, body: Buffer) => {
  const chat = JSON.parse(body.toString("utf8")) as { messages: ReadonlyArray<{ role: string; content: string }> }
  relay(chat.messages, {
    open: (events) => {
      res.writeHead(200, { "content-type": "text/event-stream", ...HEADERS })
      res.write(events)
    },
    write: (events) => res.write(events),
    end: (events) => res.end(events),
    fail: (error) => {
      if (!res.headersSent) {
        res.writeHead(502, { "content-type": "application/json" })
        res.end(JSON.stringify({ error: `relay: ${String(error)}` }))
      } else {
        res.end(errorEvents(error))
      }
    }
  })
}

const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  const chunks: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => chunks.push(chunk))
  req.on("end", () => answer(res, Buffer.concat(chunks)))
})
server.keepAliveTimeout = 120_000

process.on("disconnect", () => process.exit(0))
process.on("SIGTERM", () => process.exit(0))

// The floor at its best: an accept queue as deep as the kernel allows (net.core.somaxconn; Node's
// default is 511), so that the scale case's thousands of connections at once are not turned away
// and retried a second later. What the server's own queue does is then the server's to show.
server.listen(0, "127.0.0.1", 65_535, () => {
  process.send?.({ type: "ready", port: (server.address() as AddressInfo).port })
})
