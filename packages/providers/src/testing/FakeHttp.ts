/**
 * The HTTP plumbing shared by the fake providers (`FakeOpenAi`, `FakeAnthropic`):
 * a real server on 127.0.0.1 (an ephemeral port) that reads and records every
 * request (JSON, and optionally multipart, bodies parsed; `aborted` set when the
 * client goes away early), hands it to the fake's `route`, and plays the
 * `FakeReply` it returns. Each fake keeps its own routes, reply builders and
 * queues; this module knows nothing about any provider's API (nor does
 * `FakeStream`, which plays the streamed answers the fakes frame).
 */
import { Effect } from "effect"
import type { Scope } from "effect"
import { createServer } from "node:http"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { playSse } from "./FakeStream.ts"
import type { FakeSseReply, FakeStreamOptions } from "./FakeStream.ts"
import type { RecordedRequest, RecordedUpload } from "./RecordedRequest.ts"

export type { FakeDeltaSent, FakeStreamOptions, FakeStreamProgress } from "./FakeStream.ts"
export type { RecordedRequest, RecordedUpload } from "./RecordedRequest.ts"

/** What the server does with one request. */
export type FakeReply =
  | {
    readonly type: "json"
    readonly status: number
    readonly body: unknown
    readonly delayMs?: number
    /** How to stream this answer to a request that asks for a stream (`FakeStream`); overrides the fake's options. */
    readonly stream?: FakeStreamOptions
  }
  /** Server-sent events, as a fake frames a streamed answer (`FakeStream`). */
  | FakeSseReply
  | {
    readonly type: "text"
    readonly status: number
    readonly body: string
    readonly contentType: string
    /** Extra response headers (a redirect's `location`, …). */
    readonly headers?: Readonly<Record<string, string>>
  }
  /** A body sent in chunks without `content-length` (chunked encoding): for readers that must count bytes. */
  | { readonly type: "chunked"; readonly status: number; readonly contentType: string; readonly chunks: ReadonlyArray<string> }
  /**
   * A 200 JSON-labelled body of `totalBytes`, no `content-length`, written `chunkBytes` at a time with
   * `intervalMs` between writes, as a flooding provider would: `progress` says how far it got and
   * whether it finished (a client that stops reading ends it early).
   */
  | {
    readonly type: "stream"
    readonly totalBytes: number
    readonly chunkBytes: number
    readonly intervalMs: number
    readonly progress: StreamProgress
  }
  /** Never answer (until the client aborts or the server closes): for timeouts. */
  | { readonly type: "hang" }
  /** Destroy the socket without answering: for connection resets. */
  | { readonly type: "destroy" }
  /**
   * `reply`, once `until` resolves: nothing is sent before (a gate that opens when a test has
   * seen what it waits for, such as every request of a burst open at once).
   */
  | { readonly type: "after"; readonly until: Promise<unknown>; readonly reply: FakeReply }

/** How far a `stream` reply got: bytes written, and whether all of them were. */
export interface StreamProgress {
  sentBytes: number
  finished: boolean
}

export type FakeHandler = (request: RecordedRequest) => FakeReply

/** The reply builders every fake offers, whatever its API (each fake spreads them into its own `reply`). */
export const baseReply = {
  json: (body: unknown, status = 200, delayMs?: number): FakeReply =>
    delayMs === undefined ? { type: "json", status, body } : { type: "json", status, body, delayMs },
  /** A 200 whose body is not JSON, labelled JSON by default (so every client tries to parse it). */
  garbage: (body = "<html>definitely not json", contentType = "application/json"): FakeReply =>
    ({ type: "text", status: 200, body, contentType }),
  hang: (): FakeReply => ({ type: "hang" }),
  /** A flood of `totalBytes` (see `FakeReply`'s `stream`); the returned `progress` is live. */
  stream: (totalBytes: number, options: { chunkBytes?: number; intervalMs?: number } = {}) => {
    const progress: StreamProgress = { sentBytes: 0, finished: false }
    const reply: FakeReply = {
      type: "stream",
      totalBytes,
      chunkBytes: options.chunkBytes ?? 256 * 1024,
      intervalMs: options.intervalMs ?? 0,
      progress
    }
    return { reply, progress }
  },
  destroy: (): FakeReply => ({ type: "destroy" }),
  /** `reply`, sent once `until` resolves. */
  after: (until: Promise<unknown>, reply: FakeReply): FakeReply => ({ type: "after", until, reply }),
  /** `reply` (a JSON answer), streamed as `options` say when a request asks for a stream (`FakeStream`). */
  streamed: (reply: FakeReply, options: FakeStreamOptions): FakeReply =>
    reply.type === "json" ? { ...reply, stream: { ...reply.stream, ...options } } : reply
}

/** What every fake server exposes, whatever its routes. */
export interface FakeHttpServer {
  /** The base URL to configure (`LLM_BASE_URL`): `http://127.0.0.1:<port>/v1`. */
  readonly url: string
  readonly port: number
  /** Every request so far, in arrival order (a live array). */
  readonly requests: ReadonlyArray<RecordedRequest>
  /** Resolves once `predicate(requests)` holds (polling), or rejects after `timeoutMs`. */
  waitFor(predicate: (requests: ReadonlyArray<RecordedRequest>) => boolean, timeoutMs?: number): Promise<void>
  /** Stops listening and cuts every open connection (hanging answers included). */
  close(): Promise<void>
}

/** A started server: `requests` is the live, writable log (a fake's `reset` empties it). */
export interface StartedFakeHttp extends FakeHttpServer {
  readonly requests: Array<RecordedRequest>
}

export interface FakeHttpOptions {
  /** The fake's name, for error messages (`<name>.waitFor: …`). */
  readonly name: string
  /** Keep a record of each request (default true). */
  readonly record?: boolean | undefined
  /** Parse `multipart/form-data` bodies into `request.upload` (default false). */
  readonly multipart?: boolean
  /** The answer to one request, already recorded; a throw destroys the socket. */
  readonly route: (request: RecordedRequest) => FakeReply
}

const readBody = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks)))
    req.on("error", reject)
  })

const parseJson = (raw: Buffer): unknown => {
  try {
    return JSON.parse(raw.toString("utf8"))
  } catch {
    return undefined
  }
}

// The platform's own multipart parser (fetch's Response.formData) keeps this file dependency-free. A
// Uint8Array, not the Buffer: under the DOM's lib (the console's tests reach this file) a Buffer is no BodyInit.
const parseUpload = async (raw: Buffer, contentType: string): Promise<RecordedUpload | undefined> => {
  try {
    const form = await new Response(new Uint8Array(raw), { headers: { "content-type": contentType } }).formData()
    let file: { name: string; size: number; type: string } | undefined
    const fields: Record<string, string> = {}
    for (const [key, value] of form.entries()) {
      if (typeof value === "string") fields[key] = value
      else if (key === "file") file = { name: value.name, size: value.size, type: value.type }
    }
    return file === undefined ? undefined : { fileName: file.name, size: file.size, mediaType: file.type, fields }
  } catch {
    return undefined
  }
}

const send = (
  res: ServerResponse,
  status: number,
  contentType: string,
  body: string,
  headers: Readonly<Record<string, string>> = {}
) => {
  res.writeHead(status, { ...headers, "content-type": contentType, "content-length": Buffer.byteLength(body) }).end(body)
}

/** `serverCut` is called before the fake itself destroys the connection (not the client's doing). */
const play = (res: ServerResponse, answer: FakeReply, request: RecordedRequest, serverCut: () => void) => {
  switch (answer.type) {
    case "json": {
      const write = () => send(res, answer.status, "application/json", JSON.stringify(answer.body))
      if (answer.delayMs === undefined) write()
      else setTimeout(() => { if (!res.destroyed) write() }, answer.delayMs).unref()
      return
    }
    case "text":
      return send(res, answer.status, answer.contentType, answer.body, answer.headers)
    case "chunked": {
      res.writeHead(answer.status, { "content-type": answer.contentType })
      for (const chunk of answer.chunks) {
        if (res.destroyed) return
        res.write(chunk)
      }
      res.end()
      return
    }
    case "stream": {
      const { chunkBytes, intervalMs, progress, totalBytes } = answer
      res.writeHead(200, { "content-type": "application/json" })
      // The start of a plausible completion, then padding inside its content string: never valid JSON whole.
      const head = Buffer.from(`{"id":"chatcmpl-flood","choices":[{"index":0,"message":{"role":"assistant","content":"`)
      const padding = Buffer.alloc(chunkBytes, "a")
      const writeNext = () => {
        if (res.destroyed) return
        if (progress.sentBytes >= totalBytes) {
          progress.finished = true
          res.end()
          return
        }
        const chunk = progress.sentBytes === 0 ? Buffer.concat([head, padding]).subarray(0, chunkBytes) : padding
        const part = chunk.subarray(0, Math.min(chunk.length, totalBytes - progress.sentBytes))
        progress.sentBytes += part.length
        // Paced by the client's reading (the write callback) and the interval.
        res.write(part, () => setTimeout(writeNext, intervalMs).unref())
      }
      writeNext()
      return
    }
    case "sse":
      return playSse(res, answer, request, serverCut)
    case "hang":
      return // left open: the client's abort or close() ends it
    case "destroy":
      serverCut()
      res.socket?.destroy()
      return
    case "after":
      void answer.until.then(() => {
        if (!res.destroyed) play(res, answer.reply, request, serverCut)
      })
      return
  }
}

/** Reads and parses one request's body into a record (`aborted` still false). */
const recordRequest = async (req: IncomingMessage, multipart: boolean): Promise<RecordedRequest> => {
  const rawBody = await readBody(req)
  const contentType = req.headers["content-type"] ?? ""
  const upload = multipart && contentType.startsWith("multipart/form-data") ? await parseUpload(rawBody, contentType) : undefined
  return {
    method: req.method ?? "GET",
    path: req.url ?? "/",
    headers: req.headers,
    rawBody,
    body: contentType.includes("json") ? parseJson(rawBody) : undefined,
    ...(upload !== undefined ? { upload } : {}),
    remotePort: req.socket.remotePort ?? 0,
    aborted: false
  }
}

/** Starts a fake server that records each request and answers it with `options.route`. */
export const startFakeHttp = async (options: FakeHttpOptions): Promise<StartedFakeHttp> => {
  const requests: Array<RecordedRequest> = []

  const server = createServer((req, res) => {
    void (async () => {
      const recorded = await recordRequest(req, options.multipart === true)
      if (options.record !== false) requests.push(recorded)
      let cutHere = false
      res.on("close", () => {
        if (!res.writableFinished && !cutHere) recorded.aborted = true
      })
      play(res, options.route(recorded), recorded, () => {
        cutHere = true
      })
    })().catch(() => res.destroy())
  })

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port

  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    waitFor: async (predicate, timeoutMs = 2_000) => {
      const deadline = Date.now() + timeoutMs
      while (!predicate(requests)) {
        if (Date.now() > deadline) throw new Error(`${options.name}.waitFor: condition not met in time`)
        await new Promise((r) => setTimeout(r, 10))
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        // Keep-alive sockets and hanging answers would hold close() open forever.
        server.closeAllConnections()
      })
  }
}

/** A fake for the lifetime of a Scope: started on acquire, closed when the scope closes. */
export const scopedFake = <F extends { close(): Promise<void> }>(
  start: () => Promise<F>
): Effect.Effect<F, never, Scope.Scope> =>
  Effect.acquireRelease(Effect.promise(start), (fake) => Effect.promise(() => fake.close()))

/** A port nothing listens on (bound then released), for connection-refused tests. */
export const closedPort = async (): Promise<number> => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}
