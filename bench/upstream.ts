/**
 * Benchmark child: a minimal OpenAI-compatible upstream (the 0 ms mock).
 * `POST /v1/chat/completions` is answered as soon as the request body has been
 * read, with a fixed ChatCompletion (one assistant message, content "ok", no
 * tool calls).
 *
 * Asked for a stream (`"stream":true`, the stream case), it answers Chat
 * Completions SSE as the openai-compatible adapter reads it: the role chunk,
 * `STREAM_DELTAS` text deltas `STREAM_GAP_MS` apart, the finish chunk, the
 * usage chunk and `[DONE]`. Each delta's text is its send time (`wallClockMs`
 * and a space), so the client can time each one end to end.
 *
 * For the scale case's background part (`bench/background.ts`) it answers slowly where asked:
 * the model `bench-planner-slow` gets the planner's tool call after `ANSWER_DELAY_MS` (a
 * provider that takes 2 s a decision), the model `bench-job` (a sub-agent's step) is held until
 * the fake exits, and a chat request whose user says `dispatch-job` (with no tool result yet) is
 * answered with a call of the `research` job tool.
 *
 * It also serves the orchestrator case's instant fake of the Switchboard chat
 * route: `POST /api/agent/chat` answers a `lookup` tool call until the history
 * holds `TOOL_ROUNDS` tool results, then the final answer.
 *
 * Started by `bench/run.ts` with an IPC channel: it reports `{ type: "ready", port }`,
 * answers `{ type: "count" }` with `{ type: "count", count, connections }` (chat
 * requests served and TCP connections accepted so far) and `{ type: "peak" }` with
 * `{ type: "peak", peak }` (the most `bench-planner-slow` requests it held at once since last
 * asked), and exits when the
 * parent goes away.
 */
import { createServer } from "node:http"
import type { ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { wallClockMs } from "./sse.ts"

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

/** A completion whose assistant message is one call of `name` with `args` (JSON text). */
const toolCallCompletion = (model: string, id: string, name: string, args: string) =>
  Buffer.from(JSON.stringify({
    id: `chatcmpl-${model}`,
    object: "chat.completion",
    created: 1_700_000_000,
    model,
    choices: [{
      index: 0,
      finish_reason: "tool_calls",
      logprobs: null,
      message: { role: "assistant", content: null, refusal: null, tool_calls: [{ id, type: "function", function: { name, arguments: args } }] }
    }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }
  }))

/** For the planner case's profile (model `bench-planner`): one call of its `finish` tool, no arguments. */
const TOOL_CALL = toolCallCompletion("bench-planner", "call_bench", "finish", "{}")
const TOOL_CALL_HEADERS = { "content-type": "application/json", "content-length": String(TOOL_CALL.length) }
const NOT_FOUND = JSON.stringify({ error: { message: "not found", type: "invalid_request_error", code: null } })

/**
 * The stream case's answer: 50 deltas 20 ms apart (~1 s a turn). `STREAM_DELTAS` in the bench's
 * environment changes the count, to split a turn's cost into its per-turn and per-delta parts
 * (docs/performance.md); the stream case's figures are the 50's. `STREAM_GAP_MS` changes the pace: the
 * scale case's own mock answers at a model's (40 deltas 150 ms apart, `bench/scale.ts`).
 */
const STREAM_DELTAS = Number.parseInt(process.env["STREAM_DELTAS"] ?? "50", 10) || 50
const STREAM_GAP_MS = Number.parseInt(process.env["STREAM_GAP_MS"] ?? "20", 10) || 20
const STREAM_HEAD = `{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"bench","choices":[{"index":0,"delta":`
const streamChunk = (delta: string, finishReason: string | null) =>
  `data: ${STREAM_HEAD}${delta},"logprobs":null,"finish_reason":${finishReason === null ? "null" : `"${finishReason}"`}}]}\n\n`
const STREAM_TAIL = streamChunk("{}", "stop") +
  `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"bench","choices":[],` +
  `"usage":{"prompt_tokens":1,"completion_tokens":${STREAM_DELTAS},"total_tokens":${STREAM_DELTAS + 1}}}\n\n` +
  "data: [DONE]\n\n"

const streamAnswer = (res: ServerResponse) => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  res.write(streamChunk(`{"role":"assistant","content":""}`, null))
  let sent = 0
  const timer = setInterval(() => {
    // Stamped as the bytes are handed to the socket: what the client measures is everything after this.
    res.write(streamChunk(`{"content":"${wallClockMs().toFixed(3)} "}`, null))
    if (++sent < STREAM_DELTAS) return
    clearInterval(timer)
    res.end(STREAM_TAIL)
  }, STREAM_GAP_MS)
  res.on("close", () => clearInterval(timer))
}

/**
 * How long the `bench-planner-slow` model takes to answer (the background part's slow provider);
 * unset, the fake answers none of the background part's requests (and looks for none of them).
 */
const ANSWER_DELAY_MS = process.env["ANSWER_DELAY_MS"] === undefined ? undefined : Number.parseInt(process.env["ANSWER_DELAY_MS"], 10) || 0
/** `bench-planner-slow` requests open at this moment, and the most open at once since last asked. */
let slowOpen = 0
let slowPeak = 0
let dispatchSeq = 0
/** A dispatching turn's answer: one call of the research job tool (a question of its own each). */
const DISPATCH = () => {
  const id = `call_dispatch_${++dispatchSeq}`
  return toolCallCompletion("bench", id, "research", JSON.stringify({ question: id }))
}

/** The background part's answers (see the header): false when the request is not one of them. */
const backgroundAnswer = (body: Buffer, res: ServerResponse, delayMs: number): boolean => {
  // A sub-agent's step: never answered; held for as long as the fake lives.
  if (body.includes('"model":"bench-job"')) return true
  if (body.includes('"model":"bench-planner-slow"')) {
    slowPeak = Math.max(slowPeak, ++slowOpen)
    const timer = setTimeout(() => {
      res.writeHead(200, TOOL_CALL_HEADERS)
      res.end(TOOL_CALL)
    }, delayMs)
    res.on("close", () => {
      slowOpen--
      clearTimeout(timer)
    })
    return true
  }
  if (body.includes("dispatch-job") && !body.includes('"role":"tool"')) {
    const answer = DISPATCH()
    res.writeHead(200, { "content-type": "application/json", "content-length": String(answer.length) })
    res.end(answer)
    return true
  }
  return false
}

let served = 0
let connections = 0

/** Rounds of tool calls the fake chat route asks for before it answers. */
const TOOL_ROUNDS = 3

let fakeSeq = 0
const fakeChatAnswer = (body: string) => {
  const request = JSON.parse(body) as { messages: ReadonlyArray<{ role: string }> }
  let results = 0
  for (const message of request.messages) if (message.role === "tool") results++
  const id = `srv_${++fakeSeq}`
  return JSON.stringify(
    results < TOOL_ROUNDS
      ? { content: "", toolCalls: [{ id: `call_${id}`, name: "lookup", args: { q: `q${results + 1}` } }], messageId: id }
      : { content: `looked up ${results} things`, messageId: id }
  )
}

const server = createServer((req, res) => {
  if (req.method === "POST" && req.url === "/api/agent/chat") {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const answer = fakeChatAnswer(Buffer.concat(chunks).toString("utf8"))
      res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(answer)) })
      res.end(answer)
    })
    return
  }
  if (req.method === "POST" && req.url === "/v1/chat/completions") {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      served++
      // A substring test, not a parse: the mock must stay as cheap as it can be.
      const body = Buffer.concat(chunks)
      if (body.includes('"stream":true')) return streamAnswer(res)
      if (ANSWER_DELAY_MS !== undefined && backgroundAnswer(body, res, ANSWER_DELAY_MS)) return
      const planner = body.includes('"model":"bench-planner"')
      res.writeHead(200, planner ? TOOL_CALL_HEADERS : HEADERS)
      res.end(planner ? TOOL_CALL : COMPLETION)
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
  const type = (message as { type?: unknown } | null)?.type
  if (type === "count") process.send?.({ type: "count", count: served, connections })
  if (type === "peak") {
    process.send?.({ type: "peak", peak: slowPeak })
    slowPeak = slowOpen
  }
})
process.on("disconnect", () => process.exit(0))
process.on("SIGTERM", () => process.exit(0))

// The fake stands for a provider, which takes every connection it is sent: its accept queue as deep
// as the kernel allows (net.core.somaxconn), so that the scale case's bursts never wait on it (a full
// queue drops the SYN, and the client sends it again only 1 s later, then 3 s, 7 s).
server.listen(0, "127.0.0.1", 65_535, () => {
  process.send?.({ type: "ready", port: (server.address() as AddressInfo).port })
})
