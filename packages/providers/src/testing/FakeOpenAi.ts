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
 *
 * Streaming: a chat request with `stream: true` gets its answer (a 2xx
 * `chat.completion`, enqueued or not) as `chat.completion.chunk` events: a
 * head, the content in `textDeltas` pieces, each tool call started (id, name)
 * then its arguments in `argumentDeltas` pieces, the `finish_reason`, the
 * usage when `stream_options.include_usage` asks for it, and `data: [DONE]`.
 * Every other reply (an error status, garbage, a hang, …) is sent as it is.
 * Pacing, cuts, mid-stream errors and send times: `FakeStream`.
 */
import { Context, Layer } from "effect"
import type { Effect, Scope } from "effect"
import { baseReply, scopedFake, startFakeHttp } from "./FakeHttp.ts"
import type { FakeHandler, FakeHttpServer, FakeReply, RecordedRequest } from "./FakeHttp.ts"
import { argumentPieces, sseReply, textPieces } from "./FakeStream.ts"
import type { FakeSseEvent, FakeStreamOptions } from "./FakeStream.ts"

export { closedPort } from "./FakeHttp.ts"
export type { FakeDeltaSent, FakeHandler, FakeReply, FakeStreamOptions, RecordedRequest, RecordedUpload } from "./FakeHttp.ts"

export interface FakeToolCall {
  readonly id?: string
  readonly name: string
  /** Sent verbatim: pass malformed JSON to test `invalidArgs`. */
  readonly arguments: string
}

/** Builders for the usual replies. */
export const reply = {
  ...baseReply,
  /** A complete `chat.completion` object (`usage` as the API words it; default 1 prompt and 1 completion token). */
  completion: (
    message: { readonly content?: string | null; readonly toolCalls?: ReadonlyArray<FakeToolCall> },
    usage: Readonly<Record<string, unknown>> = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }
  ): FakeReply => {
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
      usage
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
  /** How streamed answers are streamed from now on (a reply's own options still override these). */
  streamWith(options: FakeStreamOptions): void
  /** Forget recorded requests, queued replies and the `respondWith` handler; stream as `start` said. */
  reset(): void
}

export interface StartOptions {
  /** When set, requests must carry `Authorization: Bearer <apiKey>` (otherwise 401 echoing the key sent). */
  readonly apiKey?: string
  /** Keep a record of each request (default true); turn off for load tests, where the log would only grow. */
  readonly record?: boolean
  /** How streamed answers are streamed (`FakeStream`): deltas, pace, cuts, send times. */
  readonly streaming?: FakeStreamOptions
}

const CHAT_PATH = "/v1/chat/completions"
const TRANSCRIPTION_PATH = "/v1/audio/transcriptions"

const lastUserText = (body: unknown): string => {
  const messages = (body as { messages?: unknown } | undefined)?.messages
  if (!Array.isArray(messages)) return ""
  const user = [...messages].reverse().find((m) => (m as { role?: unknown }).role === "user") as { content?: unknown } | undefined
  return typeof user?.content === "string" ? user.content : ""
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The chunks of a `chat.completion`, or `undefined` when the body is not one (then it is sent as it is). */
const completionEvents = (completion: unknown, includeUsage: boolean, options: FakeStreamOptions): Array<FakeSseEvent> | undefined => {
  if (!isRecord(completion) || completion["object"] !== "chat.completion" || !Array.isArray(completion["choices"])) return undefined
  const choice: unknown = completion["choices"][0]
  const message = isRecord(choice) ? choice["message"] : undefined
  if (!isRecord(choice) || !isRecord(message)) return undefined
  const head = { id: completion["id"], object: "chat.completion.chunk", created: completion["created"], model: completion["model"] }
  const chunk = (delta: Record<string, unknown>, finishReason: unknown = null, piece?: FakeSseEvent["delta"]): FakeSseEvent => ({
    data: JSON.stringify({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] }),
    ...(piece !== undefined ? { delta: piece } : {})
  })
  const events: Array<FakeSseEvent> = [chunk({ role: "assistant", content: "" })]
  const content = typeof message["content"] === "string" ? message["content"] : ""
  for (const text of textPieces(content, options)) events.push(chunk({ content: text }, null, { kind: "text", text }))
  const calls = Array.isArray(message["tool_calls"]) ? message["tool_calls"] : []
  for (const [index, call] of calls.entries()) {
    const fn = isRecord(call) && isRecord(call["function"]) ? call["function"] : {}
    const { arguments: args, ...named } = fn
    events.push(chunk({ tool_calls: [{ index, ...(isRecord(call) ? { id: call["id"], type: call["type"] } : {}), function: { ...named, arguments: "" } }] }))
    const argsText = args === undefined ? "" : typeof args === "string" ? args : JSON.stringify(args)
    for (const text of argumentPieces(argsText, options)) {
      events.push(chunk({ tool_calls: [{ index, function: { arguments: text } }] }, null, { kind: "arguments", text }))
    }
  }
  events.push(chunk({}, choice["finish_reason"] ?? "stop"))
  if (includeUsage && completion["usage"] !== undefined) {
    events.push({ data: JSON.stringify({ ...head, choices: [], usage: completion["usage"] }) })
  }
  events.push({ data: "[DONE]" })
  return events
}

/** What an OpenAI stream says when it fails midway. */
const streamError: FakeSseEvent = {
  data: JSON.stringify({ error: { message: "fake error mid-stream", type: "server_error", code: null } })
}

/** `answer` as the request asked for it: whole, or (a 2xx completion to a `stream: true` request) streamed. */
const shaped = (request: RecordedRequest, answer: FakeReply, defaults: FakeStreamOptions): FakeReply => {
  if (answer.type === "after") return { ...answer, reply: shaped(request, answer.reply, defaults) }
  const body = request.body
  if (!isRecord(body) || body["stream"] !== true || answer.type !== "json" || answer.status < 200 || answer.status > 299) return answer
  const options = { ...defaults, ...answer.stream }
  const includeUsage = isRecord(body["stream_options"]) && body["stream_options"]["include_usage"] === true
  const events = completionEvents(answer.body, includeUsage, options)
  return events === undefined ? answer : sseReply(events, options, streamError, answer.delayMs)
}

export const start = async (options: StartOptions = {}): Promise<FakeOpenAi> => {
  let chatQueue: Array<FakeReply> = []
  let transcriptionQueue: Array<FakeReply> = []
  let handler: FakeHandler | undefined
  let streaming: FakeStreamOptions = options.streaming ?? {}

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
      return shaped(request, next ?? handler?.(request) ?? reply.text(`fake answer to: ${lastUserText(request.body)}`), streaming)
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
    streamWith: (o) => void (streaming = o),
    reset: () => {
      requests.length = 0
      chatQueue = []
      transcriptionQueue = []
      handler = undefined
      streaming = options.streaming ?? {}
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
