/**
 * A tiny scripted OpenAI-compatible provider for the host agent walk-through
 * (README, walk-through 3): no network, no model, `node:http`
 * only. It answers `POST /v1/chat/completions` with one tool call chosen from
 * the planner's user prompt:
 *
 *   no step taken yet        → write_file { path: "hello.txt", content: "Hello from the planner: <goal>\n" }
 *   a write_file went through → finish { summary: "wrote hello.txt" }
 *   anything else            → fail { reason: "the fake planner only knows how to write hello.txt" }
 *
 * Run: `npx node examples/fake-planner-provider.ts [port]` (default 9999), then
 * point a provider profile (or a direct host's LLM_BASE_URL) at
 * `http://127.0.0.1:<port>/v1`. Any non-empty API key is accepted; a request
 * without one gets a 401, as from a real provider.
 *
 * Its `usage` is a stand-in too: a token for every 4 characters of the
 * messages' text (prompt) and of the call's arguments (completion), so that
 * token usage and host budgets (README, walk-through 9) have numbers to count.
 */
import { createServer } from "node:http"

const port = Number(process.argv[2] ?? process.env["PORT"] ?? 9999)

interface Message {
  readonly role: string
  readonly content: unknown
}

/** The user prompt's text (a screenshot makes it an array of parts). */
const textOf = (content: unknown): string => {
  if (typeof content === "string") return content
  if (Array.isArray(content)) {
    return content.map((part: { type?: string; text?: string }) => (part.type === "text" ? part.text ?? "" : "")).join("\n")
  }
  return ""
}

const decide = (prompt: string): { name: string; arguments: Record<string, unknown> } => {
  const goal = /^Goal: (.*)$/m.exec(prompt)?.[1] ?? "(no goal)"
  if (prompt.includes("No step has been taken yet.")) {
    return { name: "write_file", arguments: { path: "hello.txt", content: `Hello from the planner: ${goal}\n` } }
  }
  if (/write_file .*\n\s*→ ok:/.test(prompt)) return { name: "finish", arguments: { summary: "wrote hello.txt" } }
  return { name: "fail", arguments: { reason: "the fake planner only knows how to write hello.txt" } }
}

const server = createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => chunks.push(chunk))
  req.on("end", () => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))
    }
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      return send(404, { error: { message: `no route ${req.method} ${req.url}`, type: "not_found" } })
    }
    if (!/^Bearer \S+/.test(req.headers.authorization ?? "")) {
      return send(401, { error: { message: "missing API key", type: "invalid_request_error" } })
    }
    let body: { messages?: ReadonlyArray<Message>; model?: string }
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
    } catch {
      return send(400, { error: { message: "the body is not JSON", type: "invalid_request_error" } })
    }
    const user = [...(body.messages ?? [])].reverse().find((m) => m.role === "user")
    const call = decide(textOf(user?.content))
    const promptTokens = Math.ceil((body.messages ?? []).map((m) => textOf(m.content)).join("").length / 4)
    const completionTokens = Math.ceil(JSON.stringify(call.arguments).length / 4)
    console.log(`decision: ${call.name} ${JSON.stringify(call.arguments)}`)
    send(200, {
      id: "chatcmpl-fake-planner",
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: body.model ?? "fake-planner",
      choices: [{
        index: 0,
        finish_reason: "tool_calls",
        message: {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_1", type: "function", function: { name: call.name, arguments: JSON.stringify(call.arguments) } }]
        }
      }],
      usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens }
    })
  })
})

server.listen(port, "127.0.0.1", () => console.log(`fake planner provider on http://127.0.0.1:${port}/v1`))
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => server.close(() => process.exit(0)))
