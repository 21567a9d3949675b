/**
 * An MCP server of the tests' own, on the official SDK's server and its
 * Streamable HTTP transport over node:http: tools whose answers the test
 * decides, the headers of every request it received, the calls it ran, and a
 * tool list that can change while clients are connected (each session is
 * told: `notifications/tools/list_changed`).
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import type { ProviderChatParams, ProviderChatResponse } from "@switchboard/domain"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

export interface FakeMcpTool {
  readonly name: string
  readonly description?: string
  readonly inputSchema?: Record<string, unknown>
  /** The answer; `signal` is aborted when the client gives up on the call. */
  readonly run: (args: Record<string, unknown>, signal: AbortSignal) => Promise<CallToolResult>
}

export interface FakeMcp {
  /** `http://127.0.0.1:<port>/mcp` */
  readonly url: string
  /** Every request's headers, in order (lower-case names). */
  readonly headersSeen: Array<Readonly<Record<string, string | Array<string> | undefined>>>
  /** Every tool call run. */
  readonly calls: Array<{ readonly name: string; readonly args: Record<string, unknown> }>
  /** Replaces the tool list and tells every open session that it changed. */
  readonly setTools: (tools: ReadonlyArray<FakeMcpTool>) => Promise<void>
  /** As a restart does: every session closed and forgotten (a request naming one: 404), then these tools, told to no one. */
  readonly restart: (tools: ReadonlyArray<FakeMcpTool>) => Promise<void>
}

const objectSchema = { type: "object", properties: {} }

/** Starts the server (closed with the scope). */
export const startFakeMcp = (initial: ReadonlyArray<FakeMcpTool>) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      let tools = [...initial]
      const headersSeen: FakeMcp["headersSeen"] = []
      const calls: FakeMcp["calls"] = []
      const sessions = new Map<string, { readonly transport: StreamableHTTPServerTransport; readonly server: Server }>()

      const newSession = () => {
        const server = new Server({ name: "fake-mcp", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } })
        server.setRequestHandler(ListToolsRequestSchema, () => ({
          tools: tools.map((t) => ({ name: t.name, description: t.description ?? t.name, inputSchema: t.inputSchema ?? objectSchema }))
        }))
        server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
          const tool = tools.find((t) => t.name === request.params.name)
          const args = (request.params.arguments ?? {}) as Record<string, unknown>
          calls.push({ name: request.params.name, args })
          if (tool === undefined) return { content: [{ type: "text", text: `no tool ${request.params.name}` }], isError: true }
          return await tool.run(args, extra.signal)
        })
        const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => void sessions.set(id, { transport, server })
        })
        return { server, transport }
      }

      const http = createServer((req, res) => {
        headersSeen.push({ ...req.headers })
        const id = req.headers["mcp-session-id"]
        const session = typeof id === "string" ? sessions.get(id) : undefined
        if (session !== undefined) {
          void session.transport.handleRequest(req, res)
          return
        }
        if (req.method !== "POST" || id !== undefined) {
          res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }))
          return
        }
        const { server, transport } = newSession()
        void server.connect(transport).then(() => transport.handleRequest(req, res))
      })
      await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
      const { port } = http.address() as AddressInfo
      const fake: FakeMcp = {
        url: `http://127.0.0.1:${port}/mcp`,
        headersSeen,
        calls,
        setTools: async (next) => {
          tools = [...next]
          await Promise.allSettled([...sessions.values()].map((s) => s.server.sendToolListChanged()))
        },
        restart: async (next) => {
          const closing = [...sessions.values()]
          sessions.clear()
          await Promise.allSettled(closing.map((s) => s.server.close()))
          http.closeAllConnections()
          tools = [...next]
        }
      }
      return { fake, http, sessions }
    }),
    ({ http, sessions }) =>
      Effect.promise(async () => {
        await Promise.allSettled([...sessions.values()].map((s) => s.server.close()))
        http.closeAllConnections()
        await new Promise<void>((resolve) => http.close(() => resolve()))
      })
  ).pipe(Effect.map(({ fake }) => fake))

/** A tool that answers `text`. */
export const textTool = (name: string, text: (args: Record<string, unknown>) => string, inputSchema?: Record<string, unknown>): FakeMcpTool => ({
  name,
  ...(inputSchema === undefined ? {} : { inputSchema }),
  run: async (args) => ({ content: [{ type: "text", text: text(args) }] })
})

/** A tool that never answers (until the client gives up). */
export const hangingTool = (name: string): FakeMcpTool => ({
  name,
  run: (_, signal) => new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted"))))
})

/**
 * The model of the MCP tests: "call NAME {json}" calls that tool; a tool's answer is repeated
 * ("tool said: …", its error as "error: …"); anything else is echoed ("you said: …").
 */
export const callingModel = (params: ProviderChatParams): ProviderChatResponse => {
  const last = params.messages.at(-1)!
  if (last.role === "tool") {
    const result = last.toolResult
    return { content: result?.error === undefined ? `tool said: ${last.content}` : `error: ${result.error}` }
  }
  const match = /^call (\S+) (.*)$/.exec(last.content)
  if (match === null) return { content: `you said: ${last.content}` }
  return { content: "", toolCalls: [{ id: `call_${params.messages.length}`, name: match[1]!, args: JSON.parse(match[2]!) }] }
}
