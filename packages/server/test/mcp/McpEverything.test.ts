/**
 * An agent's MCP server against the real thing: the reference
 * `@modelcontextprotocol/server-everything`, started in its Streamable HTTP
 * mode on a free port. Its tools are offered with their own schemas (only
 * those the allowlist names), and `get-sum` called by the model is run by the
 * server: its text is in the next provider request and in the transcript,
 * and a streamed turn carries the call's input, then its output.
 */
import { assert, describe, layer } from "@effect/vitest"
import type { ChatMessage, ProviderChatParams } from "@switchboard/domain"
import { Effect } from "effect"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { spawn } from "node:child_process"
import { createRequire } from "node:module"
import { createServer } from "node:net"
import { transcriptOf, user } from "../support/JobsHelpers.ts"
import { readEventStream } from "../support/EventStream.ts"
import { baseUrl, layerTestServer, postJson, request } from "../support/TestServer.ts"

const ADMIN_TOKEN = "admin-token-for-mcp-everything"
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })

/** server-everything over Streamable HTTP, stopped with the scope: its `/mcp` URL. */
const startEverything = Effect.acquireRelease(
  Effect.promise(async () => {
    const entry = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/dist/index.js")
    const port = await freePort()
    const child = spawn(process.execPath, [entry, "streamableHttp"], {
      env: { ...process.env, PORT: String(port) },
      stdio: ["ignore", "ignore", "pipe"]
    })
    await new Promise<void>((resolve, reject) => {
      let said = ""
      child.stderr.on("data", (chunk: Buffer) => {
        said += chunk.toString()
        if (said.includes(`listening on port ${port}`)) resolve()
      })
      child.once("exit", (code) => reject(new Error(`server-everything exited (${code}): ${said}`)))
    })
    return { child, url: `http://127.0.0.1:${port}/mcp` }
  }),
  ({ child }) => Effect.sync(() => child.kill())
)

const isTool = (m: ChatMessage | undefined) => m?.role === "tool"

describe("an agent's MCP server: the real server-everything", () => {
  const fake = makeFakeProvider()

  layer(layerTestServer(fake.layer, { ADMIN_TOKEN }), { excludeTestServices: true, timeout: 60_000 })("over HTTP", (it) => {
    it.effect("its allowlisted tools offered with their schemas; get-sum run by the server, its text sent back and stored", () =>
      Effect.gen(function*() {
        const everything = yield* startEverything
        const put = yield* request("/admin/agents/calculator", {
          method: "PUT",
          headers: { "content-type": "application/json", ...admin },
          body: JSON.stringify({
            systemPrompt: "You add numbers with the tools you have.",
            mcpServers: [{ name: "everything", url: everything.url, tools: ["get-sum", "echo"] }]
          })
        })
        assert.strictEqual(put.status, 200, put.text)
        assert.deepStrictEqual(put.json.mcpServers, [{ name: "everything", url: everything.url, tools: ["get-sum", "echo"], headerNames: [] }])

        fake.answerWith((params: ProviderChatParams) =>
          Effect.succeed(
            isTool(params.messages.at(-1))
              ? { content: `the tool says: ${params.messages.at(-1)!.content}` }
              : { content: "", toolCalls: [{ id: "call_sum", name: "everything__get-sum", args: { a: 2, b: 3 } }] }
          )
        )
        const res = yield* postJson("/api/agent/chat", { agent: "calculator", chatId: "mcp-sum", messages: [user("u1", "2 + 3?")] })
        assert.strictEqual(res.status, 200, res.text)
        assert.strictEqual(res.json.content, "the tool says: The sum of 2 and 3 is 5.")
        assert.isUndefined(res.json.toolCalls, "no call is left for the client")

        // Offered: exactly the allowlist, each with the server's own description and input schema.
        const [first, second] = fake.calls.slice(-2)
        const offered = first!.toolSchemas.filter((t) => t.name.startsWith("everything__"))
        assert.deepStrictEqual(offered.map((t) => t.name).sort(), ["everything__echo", "everything__get-sum"])
        const sum = offered.find((t) => t.name === "everything__get-sum")!
        assert.strictEqual(sum.description, "Returns the sum of two numbers")
        assert.deepStrictEqual(Object.keys((sum.inputSchema as { properties: object }).properties).sort(), ["a", "b"])

        // The result in the next provider request, and in the transcript, as the call's tool message.
        const answered = second!.messages.at(-1)!
        assert.strictEqual(answered.role, "tool")
        assert.strictEqual(answered.content, "The sum of 2 and 3 is 5.")
        assert.deepStrictEqual(answered.toolResult, { toolCallId: "call_sum", name: "everything__get-sum", result: "The sum of 2 and 3 is 5." })
        const transcript = yield* transcriptOf("mcp-sum")
        assert.deepStrictEqual(transcript.map((m) => m.role), ["user", "assistant", "tool", "assistant"])
        assert.deepStrictEqual(transcript[1]!.toolCalls, [{ id: "call_sum", name: "everything__get-sum", args: { a: 2, b: 3 } }])
        assert.strictEqual(transcript[2]!.content, "The sum of 2 and 3 is 5.")

        // Streamed, the server-run call is its input, then its output, then the answer.
        const base = yield* baseUrl
        const streamed = yield* readEventStream(`${base}/api/agent/chat`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "text/event-stream" },
          body: JSON.stringify({ agent: "calculator", chatId: "mcp-sum-stream", messages: [user("u2", "2 + 3?")] })
        })
        assert.strictEqual(streamed.status, 200)
        const tool = streamed.chunks.filter((c) => c.type.startsWith("tool-"))
        assert.deepInclude(tool, { type: "tool-input-available", toolCallId: "call_sum", toolName: "everything__get-sum", input: { a: 2, b: 3 } })
        assert.deepInclude(tool, { type: "tool-output-available", toolCallId: "call_sum", output: "The sum of 2 and 3 is 5." })
        const at = (type: string) => streamed.chunks.findIndex((c) => c.type === type)
        assert.isBelow(at("tool-input-available"), at("tool-output-available"))
        assert.isBelow(at("tool-output-available"), streamed.chunks.findLastIndex((c) => c.type === "text-delta"))
        assert.isTrue(streamed.done)
      }))
  })
})
