/**
 * The stream case's relaying, shared by its two relays (`sse-relay.ts` on
 * node:http, `stack-sse-relay.ts` on the server's stack) so that they do the
 * same work and differ only in the HTTP server around it: the chat request's
 * last user message sent upstream with `stream: true` (keep-alive Agent), each
 * upstream event parsed and its text re-emitted as a `text-delta` chunk,
 * between `start`/`text-start` and `text-end`/`finish`/`[DONE]` — the shape
 * the server answers.
 */
import { Agent, request } from "node:http"
import { sseEvents } from "./sse.ts"

/** Where a relayed answer goes: its first events at the upstream's 200, then each delta, then its end. */
export interface RelayOutput {
  readonly open: (events: string) => void
  readonly write: (events: string) => void
  readonly end: (events: string) => void
  /** The upstream refused or failed: before `open` nothing was written, after it the answer is cut. */
  readonly fail: (error: unknown) => void
}

export const HEADERS = { "cache-control": "no-cache", "x-vercel-ai-ui-message-stream": "v1" }
const event = (chunk: unknown) => `data: ${JSON.stringify(chunk)}\n\n`
export const errorEvents = (error: unknown) => `${event({ type: "error", errorText: String(error) })}data: [DONE]\n\n`

export const makeRelay = (upstreamPort: number) => {
  // No cap on the sockets, as the server's provider pool has none: at the scale case's thousands of
  // streams at once a cap would queue turns behind others' answers and the floor would measure the queue.
  const agent = new Agent({ keepAlive: true })
  let seq = 0
  return (messages: ReadonlyArray<{ readonly role: string; readonly content: string }>, out: RelayOutput) => {
    const last = messages.findLast((m) => m.role === "user")
    const upstreamBody = JSON.stringify({
      model: "bench",
      messages: [{ role: "user", content: last?.content ?? "" }],
      stream: true,
      stream_options: { include_usage: true }
    })
    const id = `relay_${++seq}`
    const upstream = request({
      host: "127.0.0.1",
      port: upstreamPort,
      method: "POST",
      path: "/v1/chat/completions",
      headers: { "content-type": "application/json", accept: "text/event-stream", "content-length": String(Buffer.byteLength(upstreamBody)) },
      agent
    }, (answer) => {
      if (answer.statusCode !== 200) {
        answer.resume()
        return out.fail(`upstream HTTP ${answer.statusCode}`)
      }
      out.open(event({ type: "start", messageId: id }) + event({ type: "text-start", id }))
      let usage: unknown
      answer.on("data", sseEvents((data) => {
        if (data === "[DONE]") return
        const chunk = JSON.parse(data) as { choices?: Array<{ delta?: { content?: string } }>; usage?: unknown }
        if (chunk.usage !== undefined && chunk.usage !== null) usage = chunk.usage
        const text = chunk.choices?.[0]?.delta?.content
        if (typeof text === "string" && text !== "") out.write(event({ type: "text-delta", id, delta: text }))
      }))
      answer.on("end", () => out.end(event({ type: "text-end", id }) + event({ type: "finish", messageMetadata: { usage } }) + "data: [DONE]\n\n"))
      answer.on("error", out.fail)
    })
    upstream.on("error", out.fail)
    upstream.end(upstreamBody)
  }
}
