/**
 * A tiny `node:http` server standing in for the Switchboard API: tests give
 * it a handler, it records every request with its raw body, and it is closed
 * with the test's scope. A reply with `events` is an event stream, written
 * piece by piece as its iterable yields (a test holds the stream open by
 * awaiting inside an async generator).
 */
import { UI_STREAM_HEADERS } from "@switchboard/domain"
import { Effect } from "effect"
import type { Scope } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: Buffer
}

export interface Reply {
  readonly status?: number
  readonly json?: unknown
  readonly body?: Uint8Array | string
  readonly headers?: Record<string, string>
  /** A streamed body: each piece is written (and flushed) as it is yielded; the answer ends with the iterable. */
  readonly events?: Iterable<string> | AsyncIterable<string>
}

export type Handler = (request: RecordedRequest) => Reply | Promise<Reply>

export interface FakeServer {
  readonly url: string
  readonly requests: Array<RecordedRequest>
}

export const startFakeServer = (handler: Handler): Effect.Effect<FakeServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ server: http.Server; fake: FakeServer }>((resolve) => {
        const requests: Array<RecordedRequest> = []
        const server = http.createServer((req, res) => {
          const chunks: Array<Buffer> = []
          req.on("data", (chunk: Buffer) => chunks.push(chunk))
          req.on("end", () => {
            const recorded: RecordedRequest = {
              method: req.method ?? "GET",
              path: req.url ?? "/",
              headers: req.headers,
              body: Buffer.concat(chunks)
            }
            requests.push(recorded)
            Promise.resolve(handler(recorded)).then(
              (reply) => {
                if (reply.events !== undefined) return writeEvents(res, reply, reply.events)
                const body = reply.json !== undefined ? JSON.stringify(reply.json) : reply.body ?? ""
                res.writeHead(reply.status ?? 200, {
                  ...(reply.json !== undefined ? { "content-type": "application/json" } : {}),
                  ...reply.headers
                })
                res.end(body)
              },
              (error: unknown) => {
                res.writeHead(500, { "content-type": "application/json" })
                res.end(JSON.stringify({ error: String(error), code: "test_handler_failed" }))
              }
            )
          })
        })
        server.listen(0, "127.0.0.1", () => {
          const { port } = server.address() as AddressInfo
          resolve({ server, fake: { url: `http://127.0.0.1:${port}`, requests } })
        })
      })
    ),
    ({ server }) =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          server.closeAllConnections()
          server.close(() => resolve())
        })
      )
  ).pipe(Effect.map(({ fake }) => fake))

const writeEvents = async (res: http.ServerResponse, reply: Reply, events: Iterable<string> | AsyncIterable<string>) => {
  res.writeHead(reply.status ?? 200, { ...UI_STREAM_HEADERS, ...reply.headers })
  try {
    for await (const piece of events) {
      // The client went away (it stopped reading): a real server's turn would go on, a fake's need not.
      if (res.destroyed) return
      res.write(piece)
    }
  } finally {
    res.end()
  }
}

/** Parses a recorded multipart body with the platform's own parser (undici's FormData). */
export const formDataOf = (request: RecordedRequest): Promise<FormData> =>
  new Request("http://fake/", {
    method: "POST",
    headers: { "content-type": String(request.headers["content-type"]) },
    body: new Uint8Array(request.body)
  }).formData()
