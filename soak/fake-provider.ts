/**
 * The soak's provider: an OpenAI-compatible Chat Completions endpoint on
 * loopback, forked by `soak/run.ts` (it reports `{ type: "ready", port }` over
 * IPC). It answers two callers:
 *
 * - the planner (a request whose tools include `soak_step`): one call of
 *   `soak_step` with the step's number, as a host's planner would;
 * - chats, wake turns and research sub-agents: the same conversation rules as
 *   `chat-script.json` (the `scripted` provider of the other phases), so the
 *   provider-faults phase runs the same workload through a real HTTP provider.
 *
 * `{ type: "faults", rate }` over IPC turns faults on: that share of requests
 * gets, in turn, a reset connection, a stall (no answer until the caller gives
 * up), a trickle (a valid answer one small chunk at a time over ~3 s), a lie
 * (200 with a body that is not JSON) or a flood (200 with a valid answer of
 * `FLOOD_MIB` MiB). `{ type: "count" }` answers what was served.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

const FLOOD_MIB = Number(process.env["SOAK_FLOOD_MIB"] ?? 24)
const MAX_BODY = 32 * 1024 * 1024

const FAULTS = ["reset", "stall", "trickle", "garbage", "flood"] as const
type Fault = (typeof FAULTS)[number]

let faultRate = 0
let faultTurn = 0
let requests = 0
const served: Record<Fault | "ok", number> = { ok: 0, reset: 0, stall: 0, trickle: 0, garbage: 0, flood: 0 }

interface Message {
  readonly role: string
  readonly content?: unknown
}
interface Body {
  readonly model?: string
  readonly messages?: ReadonlyArray<Message>
  readonly tools?: ReadonlyArray<{ readonly function?: { readonly name?: string } }>
}

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
    ? content.map((part: { text?: string }) => part.text ?? "").join("\n")
    : ""

interface Answer {
  readonly content: string | null
  readonly toolCall?: { readonly name: string; readonly arguments: Record<string, unknown> }
  readonly delayMs?: number
}

/** The planner's step number is how many `soak_step` results its prompt lists; chat rules as in chat-script.json. */
const answerFor = (body: Body): Answer => {
  const messages = body.messages ?? []
  if ((body.tools ?? []).some((t) => t.function?.name === "soak_step")) {
    const prompt = textOf(messages.findLast((m) => m.role === "user")?.content)
    return { content: null, toolCall: { name: "soak_step", arguments: { note: prompt.slice(0, 40) } } }
  }
  const last = messages.at(-1)
  if (last?.role === "tool") return { content: "Dispatched." }
  const text = textOf(last?.content)
  if (/Research complete|Research failed/i.test(text)) return { content: "Noted." }
  if (text.includes("Question:")) return { content: "A one-line brief.", delayMs: 1500 }
  if (/topic/i.test(text)) return { content: null, toolCall: { name: "research", arguments: { question: text } } }
  return { content: "Ask about a topic." }
}

const completion = (body: Body, answer: Answer) => ({
  id: `chatcmpl-soak-${requests}`,
  object: "chat.completion",
  created: Math.floor(Date.now() / 1000),
  model: body.model ?? "soak",
  choices: [{
    index: 0,
    finish_reason: answer.toolCall === undefined ? "stop" : "tool_calls",
    message: {
      role: "assistant",
      content: answer.content,
      ...(answer.toolCall === undefined ? {} : {
        tool_calls: [{ id: `call_${requests}`, type: "function", function: { name: answer.toolCall.name, arguments: JSON.stringify(answer.toolCall.arguments) } }]
      })
    }
  }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }
})

/** Built once: a valid answer whose text is FLOOD_MIB MiB (a provider that does not stop talking). */
let floodBody: Buffer | undefined
const flood = () => {
  floodBody ??= Buffer.from(JSON.stringify(completion({}, { content: "x".repeat(FLOOD_MIB * 1024 * 1024) })))
  return floodBody
}

const nextFault = (): Fault | undefined => {
  if (faultRate <= 0 || Math.random() >= faultRate) return undefined
  return FAULTS[faultTurn++ % FAULTS.length]
}

const server = createServer((req, res) => {
  const chunks: Array<Buffer> = []
  let size = 0
  req.on("data", (chunk: Buffer) => {
    size += chunk.length
    if (size <= MAX_BODY) chunks.push(chunk)
  })
  req.on("end", () => {
    requests++
    const send = (status: number, body: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) return send(404, { error: { message: "no such route" } })
    let body: Body
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Body
    } catch {
      return send(400, { error: { message: "the body is not JSON" } })
    }
    const fault = nextFault()
    served[fault ?? "ok"]++
    const answer = answerFor(body)
    const text = JSON.stringify(completion(body, answer))
    switch (fault) {
      case "reset":
        return req.socket.destroy()
      case "stall":
        // Nothing, ever: the caller's timeout ends it (the socket closes with the caller's).
        return
      case "garbage":
        return res.writeHead(200, { "content-type": "application/json" }).end(`{"id":"chatcmpl-lie","choices":[{"message":{"role":"assistant","content":"unterminated`)
      case "flood":
        return res.writeHead(200, { "content-type": "application/json" }).end(flood())
      case "trickle": {
        res.writeHead(200, { "content-type": "application/json" })
        const step = Math.max(1, Math.ceil(text.length / 30))
        let at = 0
        const timer = setInterval(() => {
          if (res.destroyed || at >= text.length) {
            clearInterval(timer)
            if (!res.destroyed) res.end()
            return
          }
          res.write(text.slice(at, at + step))
          at += step
        }, 100)
        return
      }
      default:
        if (answer.delayMs !== undefined) {
          const timer = setTimeout(() => res.destroyed || res.writeHead(200, { "content-type": "application/json" }).end(text), answer.delayMs)
          res.on("close", () => clearTimeout(timer))
          return
        }
        return res.writeHead(200, { "content-type": "application/json" }).end(text)
    }
  })
})

server.keepAliveTimeout = 5_000
server.listen(0, "127.0.0.1", () => {
  process.send?.({ type: "ready", port: (server.address() as AddressInfo).port })
})

process.on("message", (message: { type?: string; rate?: number }) => {
  if (message.type === "faults") {
    faultRate = Math.max(0, Math.min(1, message.rate ?? 0))
    process.send?.({ type: "faults-set" })
  } else if (message.type === "count") {
    process.send?.({ type: "count", requests, served })
  }
})
// The soak's own exit takes this process down with it: never outlive the parent.
process.on("disconnect", () => process.exit(0))
