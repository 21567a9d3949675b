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
import { Context, Layer } from "effect"
import type { Effect, Scope } from "effect"
import { baseReply, scopedFake, startFakeHttp } from "./FakeHttp.ts"
import type { FakeHandler, FakeHttpServer, FakeReply, RecordedRequest } from "./FakeHttp.ts"

export { closedPort } from "./FakeHttp.ts"
export type { FakeHandler, FakeReply, RecordedRequest, RecordedUpload } from "./FakeHttp.ts"

export interface FakeToolCall {
  readonly id?: string
  readonly name: string
  /** Sent verbatim: pass malformed JSON to test `invalidArgs`. */
  readonly arguments: string
}

/** Builders for the usual replies. */
export const reply = {
  ...baseReply,
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
  transcription: (text: string): FakeReply => reply.json({ text })
}

export interface FakeOpenAi extends FakeHttpServer {
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
}

export interface StartOptions {
  /** When set, requests must carry `Authorization: Bearer <apiKey>` (otherwise 401 echoing the key sent). */
  readonly apiKey?: string
  /** Keep a record of each request (default true); turn off for load tests, where the log would only grow. */
  readonly record?: boolean
}

const CHAT_PATH = "/v1/chat/completions"
const TRANSCRIPTION_PATH = "/v1/audio/transcriptions"

const lastUserText = (body: unknown): string => {
  const messages = (body as { messages?: unknown } | undefined)?.messages
  if (!Array.isArray(messages)) return ""
  const user = [...messages].reverse().find((m) => (m as { role?: unknown }).role === "user") as { content?: unknown } | undefined
  return typeof user?.content === "string" ? user.content : ""
}

export const start = async (options: StartOptions = {}): Promise<FakeOpenAi> => {
  let chatQueue: Array<FakeReply> = []
  let transcriptionQueue: Array<FakeReply> = []
  let handler: FakeHandler | undefined

  const route = (request: RecordedRequest): FakeReply => {
    const { method, path, upload } = request
    const authorization = request.headers.authorization
    if (options.apiKey !== undefined && authorization !== `Bearer ${options.apiKey}`) {
      const sent = (authorization ?? "").replace(/^Bearer\s+/i, "")
      return reply.json({
        error: { message: `Incorrect API key provided: ${sent}`, type: "invalid_request_error", code: "invalid_api_key" }
      }, 401)
    }
    if (method === "POST" && path === CHAT_PATH) {
      const next = chatQueue.shift()
      return next ?? handler?.(request) ?? reply.text(`fake answer to: ${lastUserText(request.body)}`)
    }
    if (method === "POST" && path === TRANSCRIPTION_PATH) {
      const next = transcriptionQueue.shift()
      if (next !== undefined) return next
      if (upload === undefined) return reply.status(400, "expected a multipart upload with a file")
      return reply.transcription(`fake transcription of ${upload.fileName} (${upload.size} bytes)`)
    }
    return reply.json({ error: { message: `no route ${method} ${path}`, type: "not_found" } }, 404)
  }

  const http = await startFakeHttp({ name: "FakeOpenAi", multipart: true, record: options.record, route })
  const { requests } = http

  return {
    ...http,
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
    }
  }
}

/** The fake for the lifetime of a Scope (closed when the scope closes). */
export const scoped = (options: StartOptions = {}): Effect.Effect<FakeOpenAi, never, Scope.Scope> =>
  scopedFake(() => start(options))

/** The fake as a service, for `layer(...)` blocks of `@effect/vitest`. */
export class FakeOpenAiServer extends Context.Service<FakeOpenAiServer, FakeOpenAi>()("switchboard/test/FakeOpenAiServer") {
  static readonly layer = (options: StartOptions = {}): Layer.Layer<FakeOpenAiServer> =>
    Layer.effect(FakeOpenAiServer, scoped(options))
}
