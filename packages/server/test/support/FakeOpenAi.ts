/**
 * A local OpenAI-compatible server for tests: real HTTP on 127.0.0.1 (an
 * ephemeral port), no module mocking. It records every request and answers
 * from a programmable queue, so a test can check both what reached the wire
 * and how the adapter copes with what comes back.
 *
 * ```ts
 * const fake = await FakeOpenAi.start()                 // or: yield* FakeOpenAi.scoped / FakeOpenAiServer.layer
 * // LLM_BASE_URL = fake.url  ("http://127.0.0.1:<port>/v1")
 * fake.enqueue(FakeOpenAi.reply.toolCalls([{ name: "transcribe_video", arguments: "{}" }]))
 * fake.enqueue(FakeOpenAi.reply.status(429, "rate limited"))
 * // ...call the route / adapter...
 * fake.chatRequests()[0]?.body                           // the parsed JSON the provider received
 * await fake.close()
 * ```
 *
 * Routes:
 * - `POST /v1/chat/completions`: the next enqueued reply, else the `respondWith`
 *   handler, else `reply.completion({ content: "fake answer to: <last user message>" })`.
 * - `POST /v1/audio/transcriptions` (multipart): the next `enqueueTranscription`
 *   reply, else `{ text: "fake transcription of <file name> (<size> bytes)" }`;
 *   the upload is recorded in `request.upload`.
 * - anything else: 404 with an OpenAI-style error body.
 *
 * With `start({ apiKey })`, a request without `Authorization: Bearer <apiKey>`
 * gets a 401 whose message echoes the key it was sent, as real providers do:
 * handy to prove that secrets are redacted.
 */
import { Context, Effect, Layer } from "effect"
import type { Scope } from "effect"
import { createServer } from "node:http"
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/** A multipart upload as the server received it. */
export interface RecordedUpload {
  readonly fileName: string
  readonly size: number
  readonly mediaType: string
  /** Every non-file field (`model`, `language`, …). */
  readonly fields: Readonly<Record<string, string>>
}

export interface RecordedRequest {
  readonly method: string
  /** Path and query, e.g. `/v1/chat/completions`. */
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly rawBody: Buffer
  /** The body parsed as JSON; `undefined` when it is not JSON (e.g. multipart). */
  readonly body: unknown
  readonly upload?: RecordedUpload
  /** Set when the client went away before the answer was complete (an aborted or timed-out call). */
  aborted: boolean
}

/** What the server does with one request. */
export type FakeReply =
  | { readonly type: "json"; readonly status: number; readonly body: unknown; readonly delayMs?: number }
  | { readonly type: "text"; readonly status: number; readonly body: string; readonly contentType: string }
  /** Never answer (until the client aborts or the server closes): for timeouts. */
  | { readonly type: "hang" }
  /** Destroy the socket without answering: for connection resets. */
  | { readonly type: "destroy" }

export type FakeHandler = (request: RecordedRequest) => FakeReply

export interface FakeToolCall {
  readonly id?: string
  readonly name: string
  /** Sent verbatim: pass malformed JSON to test `invalidArgs`. */
  readonly arguments: string
}

/** Builders for the usual replies. */
export const reply = {
  json: (body: unknown, status = 200, delayMs?: number): FakeReply =>
    delayMs === undefined ? { type: "json", status, body } : { type: "json", status, body, delayMs },
  /** A complete `chat.completion` object. */
  completion: (message: { readonly content?: string | null; readonly toolCalls?: ReadonlyArray<FakeToolCall> }): FakeReply => {
    const toolCalls = message.toolCalls ?? []
    return reply.json({
      id: "chatcmpl-fake",
      object: "chat.completion",
      created: 0,
      model: "fake-model",
      choices: [{
        index: 0,
        finish_reason: toolCalls.length > 0 ? "tool_calls" : "stop",
        logprobs: null,
        message: {
          role: "assistant",
          content: message.content ?? null,
          refusal: null,
          ...(toolCalls.length > 0
            ? {
              tool_calls: toolCalls.map((call, i) => ({
                id: call.id ?? `call_fake_${i}`,
                type: "function",
                function: { name: call.name, arguments: call.arguments }
              }))
            }
            : {})
        }
      }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }
    })
  },
  text: (content: string): FakeReply => reply.completion({ content }),
  toolCalls: (toolCalls: ReadonlyArray<FakeToolCall>, content: string | null = null): FakeReply =>
    reply.completion({ content, toolCalls }),
  /** An error status with an OpenAI-style body `{ error: { message, type, code } }`. */
  status: (status: number, message = `fake error ${status}`): FakeReply =>
    reply.json({ error: { message, type: status >= 500 ? "server_error" : "invalid_request_error", code: null } }, status),
  /** A 200 whose body is not JSON, labelled JSON by default (so every client tries to parse it). */
  garbage: (body = "<html>definitely not json", contentType = "application/json"): FakeReply =>
    ({ type: "text", status: 200, body, contentType }),
  hang: (): FakeReply => ({ type: "hang" }),
  destroy: (): FakeReply => ({ type: "destroy" }),
  transcription: (text: string): FakeReply => reply.json({ text })
}

export interface FakeOpenAi {
  /** The base URL to configure (`LLM_BASE_URL`): `http://127.0.0.1:<port>/v1`. */
  readonly url: string
  readonly port: number
  /** Every request so far, in arrival order (a live array). */
  readonly requests: ReadonlyArray<RecordedRequest>
  /** Only the `POST /v1/chat/completions` requests. */
  chatRequests(): ReadonlyArray<RecordedRequest>
  /** Only the `POST /v1/audio/transcriptions` requests. */
  transcriptionRequests(): ReadonlyArray<RecordedRequest>
  /** Replies for the next chat completion requests, first in first out. */
  enqueue(...replies: ReadonlyArray<FakeReply>): void
  /** The chat completion reply when the queue is empty. */
  respondWith(handler: FakeHandler): void
  /** Replies for the next transcription requests, first in first out. */
  enqueueTranscription(...replies: ReadonlyArray<FakeReply>): void
  /** Forget recorded requests, queued replies and the `respondWith` handler. */
  reset(): void
  /** Resolves once `predicate(requests)` holds (polling), or rejects after `timeoutMs`. */
  waitFor(predicate: (requests: ReadonlyArray<RecordedRequest>) => boolean, timeoutMs?: number): Promise<void>
  /** Stops listening and cuts every open connection (hanging answers included). */
  close(): Promise<void>
}

export interface StartOptions {
  /** When set, requests must carry `Authorization: Bearer <apiKey>` (otherwise 401 echoing the key sent). */
  readonly apiKey?: string
  /** Keep a record of each request (default true); turn off for load tests, where the log would only grow. */
  readonly record?: boolean
}

const CHAT_PATH = "/v1/chat/completions"
const TRANSCRIPTION_PATH = "/v1/audio/transcriptions"

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

// The platform's own multipart parser (fetch's Response.formData) keeps this file dependency-free.
const parseUpload = async (raw: Buffer, contentType: string): Promise<RecordedUpload | undefined> => {
  try {
    const form = await new Response(raw, { headers: { "content-type": contentType } }).formData()
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

const send = (res: ServerResponse, status: number, contentType: string, body: string) => {
  res.writeHead(status, { "content-type": contentType, "content-length": Buffer.byteLength(body) }).end(body)
}

const lastUserText = (body: unknown): string => {
  const messages = (body as { messages?: unknown } | undefined)?.messages
  if (!Array.isArray(messages)) return ""
  const user = [...messages].reverse().find((m) => (m as { role?: unknown }).role === "user") as { content?: unknown } | undefined
  return typeof user?.content === "string" ? user.content : ""
}

export const start = async (options: StartOptions = {}): Promise<FakeOpenAi> => {
  const requests: Array<RecordedRequest> = []
  let chatQueue: Array<FakeReply> = []
  let transcriptionQueue: Array<FakeReply> = []
  let handler: FakeHandler | undefined

  const play = (res: ServerResponse, answer: FakeReply) => {
    switch (answer.type) {
      case "json": {
        const write = () => send(res, answer.status, "application/json", JSON.stringify(answer.body))
        if (answer.delayMs === undefined) write()
        else setTimeout(() => { if (!res.destroyed) write() }, answer.delayMs).unref()
        return
      }
      case "text":
        return send(res, answer.status, answer.contentType, answer.body)
      case "hang":
        return // left open: the client's abort or close() ends it
      case "destroy":
        res.socket?.destroy()
        return
    }
  }

  const server = createServer((req, res) => {
    void (async () => {
      const rawBody = await readBody(req)
      const path = req.url ?? "/"
      const contentType = req.headers["content-type"] ?? ""
      const upload = contentType.startsWith("multipart/form-data") ? await parseUpload(rawBody, contentType) : undefined
      const recorded: RecordedRequest = {
        method: req.method ?? "GET",
        path,
        headers: req.headers,
        rawBody,
        body: contentType.includes("json") ? parseJson(rawBody) : undefined,
        ...(upload !== undefined ? { upload } : {}),
        aborted: false
      }
      if (options.record !== false) requests.push(recorded)
      res.on("close", () => {
        if (!res.writableFinished) recorded.aborted = true
      })

      if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
        const sent = (req.headers.authorization ?? "").replace(/^Bearer\s+/i, "")
        return play(res, reply.json({
          error: { message: `Incorrect API key provided: ${sent}`, type: "invalid_request_error", code: "invalid_api_key" }
        }, 401))
      }
      if (req.method === "POST" && path === CHAT_PATH) {
        const next = chatQueue.shift()
        return play(res, next ?? handler?.(recorded) ?? reply.text(`fake answer to: ${lastUserText(recorded.body)}`))
      }
      if (req.method === "POST" && path === TRANSCRIPTION_PATH) {
        const next = transcriptionQueue.shift()
        if (next !== undefined) return play(res, next)
        if (upload === undefined) return play(res, reply.status(400, "expected a multipart upload with a file"))
        return play(res, reply.transcription(`fake transcription of ${upload.fileName} (${upload.size} bytes)`))
      }
      return play(res, reply.json({ error: { message: `no route ${req.method} ${path}`, type: "not_found" } }, 404))
    })().catch(() => res.destroy())
  })

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port

  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    chatRequests: () => requests.filter((r) => r.path === CHAT_PATH),
    transcriptionRequests: () => requests.filter((r) => r.path === TRANSCRIPTION_PATH),
    enqueue: (...replies) => void chatQueue.push(...replies),
    respondWith: (h) => void (handler = h),
    enqueueTranscription: (...replies) => void transcriptionQueue.push(...replies),
    reset: () => {
      requests.length = 0
      chatQueue = []
      transcriptionQueue = []
      handler = undefined
    },
    waitFor: async (predicate, timeoutMs = 2_000) => {
      const deadline = Date.now() + timeoutMs
      while (!predicate(requests)) {
        if (Date.now() > deadline) throw new Error("FakeOpenAi.waitFor: condition not met in time")
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

/** The fake for the lifetime of a Scope (closed when the scope closes). */
export const scoped = (options: StartOptions = {}): Effect.Effect<FakeOpenAi, never, Scope.Scope> =>
  Effect.acquireRelease(Effect.promise(() => start(options)), (fake) => Effect.promise(() => fake.close()))

/** The fake as a service, for `layer(...)` blocks of `@effect/vitest`. */
export class FakeOpenAiServer extends Context.Service<FakeOpenAiServer, FakeOpenAi>()("switchboard/test/FakeOpenAiServer") {
  static readonly layer = (options: StartOptions = {}): Layer.Layer<FakeOpenAiServer> =>
    Layer.effect(FakeOpenAiServer, scoped(options))
}

/** A port nothing listens on (bound then released), for connection-refused tests. */
export const closedPort = async (): Promise<number> => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}
