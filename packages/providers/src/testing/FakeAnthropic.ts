/**
 * A local Anthropic Messages API for tests: real HTTP on 127.0.0.1 (an
 * ephemeral port), no module mocking. Like `FakeOpenAi`, it records every
 * request and answers from a programmable queue; unlike it, it also checks
 * each request against the rules the real API enforces (roles alternate, no
 * empty text blocks, every `tool_use` answered by a `tool_result` in the next
 * message, results first, …) and answers 400 the way the API does when one is
 * broken, so a passing test also says "Anthropic would accept this".
 *
 * ```ts
 * const fake = await FakeAnthropic.start({ apiKey })    // or: yield* FakeAnthropic.scoped / FakeAnthropicServer.layer
 * // LLM_BASE_URL = fake.url  ("http://127.0.0.1:<port>/v1")
 * fake.enqueue(FakeAnthropic.reply.toolUse([{ name: "transcribe_video", input: {} }]))
 * fake.enqueue(FakeAnthropic.reply.status(529, "Overloaded"))
 * // ...call the adapter...
 * fake.messageRequests()[0]?.body                      // the parsed JSON the provider received
 * await fake.close()
 * ```
 *
 * Routes:
 * - `POST /v1/messages`: 400 when `anthropic-version` is missing or the body
 *   breaks a rule (`validate`, on by default); else the next enqueued reply,
 *   else the `respondWith` handler, else `reply.text("fake answer to: <last user text>")`.
 * - anything else: 404 with an Anthropic-style error body.
 *
 * With `start({ apiKey })`, a request without `x-api-key: <apiKey>` gets a 401
 * whose message echoes the key it was sent (the real API does not, a proxy
 * might): handy to prove that secrets are redacted.
 *
 * Streaming: a request with `stream: true` gets its answer (a 2xx `message`,
 * enqueued or not) as the API's events: `message_start` (the usage of the
 * prompt), a `ping`, each block started, its text in `textDeltas` pieces or
 * its input's JSON in `argumentDeltas` pieces and stopped, `message_delta`
 * (stop reason, output tokens) and `message_stop`. Every other reply is sent
 * as it is. Pacing, cuts, mid-stream errors (`overloaded_error`) and send
 * times: `FakeStream`.
 */
import { Context, Layer } from "effect"
import type { Effect, Scope } from "effect"
import { baseReply, scopedFake, startFakeHttp } from "./FakeHttp.ts"
import type { FakeHandler, FakeHttpServer, FakeReply, RecordedRequest } from "./FakeHttp.ts"
import { argumentPieces, sseReply, textPieces } from "./FakeStream.ts"
import type { FakeSseEvent, FakeStreamOptions } from "./FakeStream.ts"

export { closedPort } from "./FakeHttp.ts"
export type { FakeDeltaSent, FakeHandler, FakeReply, FakeStreamOptions, RecordedRequest } from "./FakeHttp.ts"

export interface FakeToolUse {
  readonly id?: string
  readonly name: string
  /** Sent verbatim: pass a non-object to test `invalidArgs`. */
  readonly input: unknown
}

/** A content block of an answer, sent verbatim (unknown types included, e.g. `thinking`). */
export type FakeBlock = Readonly<Record<string, unknown>>

/** The `error.type` the API uses for a status. */
const errorTypeFor = (status: number): string => {
  switch (status) {
    case 400:
      return "invalid_request_error"
    case 401:
      return "authentication_error"
    case 403:
      return "permission_error"
    case 404:
      return "not_found_error"
    case 413:
      return "request_too_large"
    case 429:
      return "rate_limit_error"
    case 529:
      return "overloaded_error"
    default:
      return "api_error"
  }
}

/** Builders for the usual replies. */
export const reply = {
  ...baseReply,
  /** A complete `message` object with these content blocks (`usage` as the API words it; default 1 token in, 1 out). */
  message: (
    content: ReadonlyArray<FakeBlock>,
    usage: Readonly<Record<string, unknown>> = { input_tokens: 1, output_tokens: 1 }
  ): FakeReply =>
    reply.json({
      id: "msg_fake",
      type: "message",
      role: "assistant",
      model: "claude-fake",
      content,
      stop_reason: content.some((b) => b["type"] === "tool_use") ? "tool_use" : "end_turn",
      stop_sequence: null,
      usage
    }),
  text: (text: string): FakeReply => reply.message([{ type: "text", text }]),
  /** `tool_use` blocks, after a text block when `text` is given. */
  toolUse: (calls: ReadonlyArray<FakeToolUse>, text?: string): FakeReply =>
    reply.message([
      ...(text !== undefined ? [{ type: "text", text }] : []),
      ...calls.map((call, i) => ({ type: "tool_use", id: call.id ?? `toolu_fake_${i}`, name: call.name, input: call.input }))
    ]),
  /** An error status with an Anthropic-style body `{ type: "error", error: { type, message } }`. */
  status: (status: number, message = `fake error ${status}`, type = errorTypeFor(status)): FakeReply =>
    reply.json({ type: "error", error: { type, message } }, status)
}

export interface FakeAnthropic extends FakeHttpServer {
  /** Only the `POST /v1/messages` requests. */
  messageRequests(): ReadonlyArray<RecordedRequest>
  /** Replies for the next message requests that pass the checks, first in first out. */
  enqueue(...replies: ReadonlyArray<FakeReply>): void
  /** The reply when the queue is empty. */
  respondWith(handler: FakeHandler): void
  /** How streamed answers are streamed from now on (a reply's own options still override these). */
  streamWith(options: FakeStreamOptions): void
  /** Forget recorded requests, queued replies and the `respondWith` handler; stream as `start` said. */
  reset(): void
}

export interface StartOptions {
  /** When set, requests must carry `x-api-key: <apiKey>` (otherwise 401 echoing the key sent). */
  readonly apiKey?: string
  /** Check request bodies against the API's rules, answering 400 like the API (default true). */
  readonly validate?: boolean
  /** How streamed answers are streamed (`FakeStream`): deltas, pace, cuts, send times. */
  readonly streaming?: FakeStreamOptions
}

const MESSAGES_PATH = "/v1/messages"

// ---------------------------------------------------------------------------
// The API's rules, as far as this adapter's requests can break them

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const hasText = (u: unknown): boolean => typeof u === "string" && u.trim() !== ""

const blocksOf = (content: unknown): ReadonlyArray<Record<string, unknown>> =>
  Array.isArray(content) ? content.filter(isRecord) : []

const idsOf = (content: unknown, type: "tool_use" | "tool_result", key: "id" | "tool_use_id"): Array<unknown> =>
  blocksOf(content).filter((b) => b["type"] === type).map((b) => b[key])

const blockProblem = (block: unknown, role: unknown, at: string): string | undefined => {
  if (!isRecord(block)) return `${at}: expected an object`
  switch (block["type"]) {
    case "text":
      return hasText(block["text"]) ? undefined : `${at}: text content blocks must contain non-whitespace text`
    case "tool_use":
      if (role !== "assistant") return `${at}: tool_use blocks are only allowed in assistant messages`
      if (typeof block["id"] !== "string" || typeof block["name"] !== "string") return `${at}: tool_use needs an id and a name`
      return isRecord(block["input"]) ? undefined : `${at}.input: Input should be a valid dictionary`
    case "tool_result":
      if (role !== "user") return `${at}: tool_result blocks are only allowed in user messages`
      if (typeof block["tool_use_id"] !== "string") return `${at}.tool_use_id: Field required`
      if (typeof block["content"] !== "string" && !Array.isArray(block["content"])) return `${at}.content: expected a string or blocks`
      return block["is_error"] === undefined || typeof block["is_error"] === "boolean" ? undefined : `${at}.is_error: expected a boolean`
    case "image": {
      if (role !== "user") return `${at}: image blocks are only allowed in user messages`
      const source = block["source"]
      if (!isRecord(source) || source["type"] !== "base64") return `${at}.source: expected a base64 source`
      if (!["image/png", "image/jpeg", "image/gif", "image/webp"].includes(String(source["media_type"]))) {
        return `${at}.source.media_type: unsupported image type`
      }
      return typeof source["data"] === "string" && source["data"] !== "" ? undefined : `${at}.source.data: Field required`
    }
    default:
      return `${at}: unexpected block type ${JSON.stringify(block["type"])}`
  }
}

const messageProblem = (messages: ReadonlyArray<unknown>, i: number): string | undefined => {
  const message = messages[i]
  const at = `messages.${i}`
  if (!isRecord(message)) return `${at}: expected an object`
  const { content, role } = message
  if (role !== "user" && role !== "assistant") return `${at}.role: Input should be 'user' or 'assistant'`
  const previous = messages[i - 1]
  if (isRecord(previous) && previous["role"] === role) {
    return `messages: roles must alternate between "user" and "assistant", but found multiple "${role}" roles in a row`
  }
  if (typeof content === "string") {
    const finalAssistant = role === "assistant" && i === messages.length - 1
    return hasText(content) || finalAssistant ? undefined : `${at}: all messages must have non-empty content except for the optional final assistant message`
  }
  if (!Array.isArray(content) || content.length === 0) {
    return `${at}: all messages must have non-empty content except for the optional final assistant message`
  }
  for (const [j, block] of content.entries()) {
    const problem = blockProblem(block, role, `${at}.content.${j}`)
    if (problem !== undefined) return problem
  }
  const types = blocksOf(content).map((b) => b["type"])
  const firstOther = types.findIndex((t) => t !== "tool_result")
  if (firstOther !== -1 && types.slice(firstOther).includes("tool_result")) {
    return `${at}: tool_result blocks must come first in the content, before any other block`
  }
  // Every tool_result answers a tool_use of the message just before; every tool_use is answered in the next one.
  const asked = isRecord(previous) ? idsOf(previous["content"], "tool_use", "id") : []
  const stray = idsOf(content, "tool_result", "tool_use_id").filter((id) => !asked.includes(id))
  if (stray.length > 0) {
    return `${at}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${stray.join(", ")}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`
  }
  const next = messages[i + 1]
  if (isRecord(next)) {
    const answered = idsOf(next["content"], "tool_result", "tool_use_id")
    const unanswered = idsOf(content, "tool_use", "id").filter((id) => !answered.includes(id))
    if (unanswered.length > 0) {
      return `${at}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${unanswered.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`
    }
  }
  return undefined
}

/** Why the real API would refuse this body, or `undefined` when it would take it. */
export const requestProblem = (body: unknown): string | undefined => {
  if (!isRecord(body)) return "request body must be a JSON object"
  if (!hasText(body["model"])) return "model: Field required"
  const maxTokens = body["max_tokens"]
  if (typeof maxTokens !== "number" || !Number.isInteger(maxTokens) || maxTokens < 1) return "max_tokens: Field required (a positive integer)"
  const system = body["system"]
  if (system !== undefined && typeof system !== "string" && !Array.isArray(system)) return "system: Input should be a valid string"
  const messages = body["messages"]
  if (!Array.isArray(messages) || messages.length === 0) return "messages: at least one message is required"
  for (let i = 0; i < messages.length; i++) {
    const problem = messageProblem(messages, i)
    if (problem !== undefined) return problem
  }
  const tools = body["tools"]
  if (tools !== undefined) {
    if (!Array.isArray(tools)) return "tools: Input should be a valid list"
    for (const [i, tool] of tools.entries()) {
      if (!isRecord(tool) || typeof tool["name"] !== "string" || !/^[a-zA-Z0-9_-]{1,64}$/.test(tool["name"])) {
        return `tools.${i}.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`
      }
      const schema = tool["input_schema"]
      if (!isRecord(schema) || schema["type"] !== "object") return `tools.${i}.input_schema.type: Input should be 'object'`
    }
  }
  return undefined
}

// ---------------------------------------------------------------------------
// Server

/** The text of the last user message that has any (a string, or its text blocks). */
const lastUserText = (body: unknown): string => {
  const messages = isRecord(body) ? body["messages"] : undefined
  if (!Array.isArray(messages)) return ""
  for (const message of [...messages].reverse()) {
    if (!isRecord(message) || message["role"] !== "user") continue
    const content = message["content"]
    const text = typeof content === "string"
      ? content
      : blocksOf(content).flatMap((b) => b["type"] === "text" && typeof b["text"] === "string" ? [b["text"]] : []).join("\n")
    if (text !== "") return text
  }
  return ""
}

const named = (event: string, data: Record<string, unknown>, delta?: FakeSseEvent["delta"]): FakeSseEvent => ({
  event,
  data: JSON.stringify({ type: event, ...data }),
  ...(delta !== undefined ? { delta } : {})
})

/** A block as `content_block_start` opens it: text empty, a tool's input `{}`, anything else whole. */
const openedBlock = (block: Record<string, unknown>): Record<string, unknown> => {
  switch (block["type"]) {
    case "text":
      return { type: "text", text: "" }
    case "tool_use": {
      const { input: _input, ...rest } = block
      return { ...rest, input: {} }
    }
    default:
      return block
  }
}

/** The events of a `message`, or `undefined` when the body is not one (then it is sent as it is). */
const messageEvents = (message: unknown, options: FakeStreamOptions): Array<FakeSseEvent> | undefined => {
  if (!isRecord(message) || message["type"] !== "message" || !Array.isArray(message["content"])) return undefined
  const usage = isRecord(message["usage"]) ? message["usage"] : {}
  const { output_tokens: outputTokens, ...prompt } = usage
  const events: Array<FakeSseEvent> = [
    named("message_start", { message: { ...message, content: [], stop_reason: null, usage: { ...prompt, output_tokens: 0 } } }),
    named("ping", {})
  ]
  for (const [index, block] of message["content"].entries()) {
    if (!isRecord(block)) continue
    events.push(named("content_block_start", { index, content_block: openedBlock(block) }))
    if (block["type"] === "text" && typeof block["text"] === "string") {
      for (const text of textPieces(block["text"], options)) {
        events.push(named("content_block_delta", { index, delta: { type: "text_delta", text } }, { kind: "text", text }))
      }
    }
    if (block["type"] === "tool_use" && block["input"] !== undefined) {
      for (const text of argumentPieces(JSON.stringify(block["input"]), options)) {
        events.push(named("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: text } }, { kind: "arguments", text }))
      }
    }
    events.push(named("content_block_stop", { index }))
  }
  events.push(
    named("message_delta", { delta: { stop_reason: message["stop_reason"] ?? "end_turn", stop_sequence: null }, usage: { output_tokens: outputTokens ?? 0 } }),
    named("message_stop", {})
  )
  return events
}

/** What a Messages stream says when it fails midway. */
const streamError = named("error", { error: { type: "overloaded_error", message: "Overloaded" } })

/** `answer` as the request asked for it: whole, or (a 2xx message to a `stream: true` request) streamed. */
const shaped = (request: RecordedRequest, answer: FakeReply, defaults: FakeStreamOptions): FakeReply => {
  if (answer.type === "after") return { ...answer, reply: shaped(request, answer.reply, defaults) }
  if (!isRecord(request.body) || request.body["stream"] !== true || answer.type !== "json" || answer.status < 200 || answer.status > 299) {
    return answer
  }
  const options = { ...defaults, ...answer.stream }
  const events = messageEvents(answer.body, options)
  return events === undefined ? answer : sseReply(events, options, streamError, answer.delayMs)
}

export const start = async (options: StartOptions = {}): Promise<FakeAnthropic> => {
  let queue: Array<FakeReply> = []
  let handler: FakeHandler | undefined
  let streaming: FakeStreamOptions = options.streaming ?? {}

  const route = (request: RecordedRequest): FakeReply => {
    const { headers, method, path } = request
    const sentKey = headers["x-api-key"]
    if (options.apiKey !== undefined && sentKey !== options.apiKey) {
      return reply.status(401, `invalid x-api-key: ${String(sentKey ?? "")}`)
    }
    if (method !== "POST" || path !== MESSAGES_PATH) {
      return reply.status(404, `no route ${method} ${path}`)
    }
    if (headers["anthropic-version"] === undefined) {
      return reply.status(400, "anthropic-version: header is required")
    }
    const problem = options.validate === false ? undefined : requestProblem(request.body)
    if (problem !== undefined) return reply.status(400, problem)
    const next = queue.shift()
    return shaped(request, next ?? handler?.(request) ?? reply.text(`fake answer to: ${lastUserText(request.body)}`), streaming)
  }

  const http = await startFakeHttp({ name: "FakeAnthropic", route })
  const { requests } = http

  return {
    ...http,
    messageRequests: () => requests.filter((r) => r.path === MESSAGES_PATH),
    enqueue: (...replies) => void queue.push(...replies),
    respondWith: (h) => void (handler = h),
    streamWith: (o) => void (streaming = o),
    reset: () => {
      requests.length = 0
      queue = []
      handler = undefined
      streaming = options.streaming ?? {}
    }
  }
}

/** The fake for the lifetime of a Scope (closed when the scope closes). */
export const scoped = (options: StartOptions = {}): Effect.Effect<FakeAnthropic, never, Scope.Scope> =>
  scopedFake(() => start(options))

/** The fake as a service, for `layer(...)` blocks of `@effect/vitest`. */
export class FakeAnthropicServer extends Context.Service<FakeAnthropicServer, FakeAnthropic>()(
  "switchboard/test/FakeAnthropicServer"
) {
  static readonly layer = (options: StartOptions = {}): Layer.Layer<FakeAnthropicServer> =>
    Layer.effect(FakeAnthropicServer, scoped(options))
}
