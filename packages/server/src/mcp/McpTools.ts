/**
 * An agent's MCP servers' tools as chat's server tools (chat/ServerTools.ts):
 * listed when a turn starts (`McpClients`: cached per server), offered as
 * `{server}__{tool}` with the server's description and input schema, run by
 * the server when the model calls them, their answers stored as the tool
 * messages (`McpResults.ts`). Nothing here fails a turn: a server that cannot
 * be listed is left out of it (logged, counted), and a call that cannot be
 * made is a tool error the model reads.
 *
 * A tool that needs a user's approval (`requireApproval`) is offered and
 * named in `approval`: the turn never runs its call, it stops there and the
 * user's decision (approvals/) runs it through `execute`.
 */
import type { AgentDefinition, ChatMessage, JsonObject, McpServerView, ToolCall, ToolSchema } from "@switchboard/domain"
import { MCP_TOOL_SEPARATOR, mcpToolName, needsApproval } from "@switchboard/domain"
import type { Tool } from "@modelcontextprotocol/sdk/types.js"
import { Clock, Effect, Layer } from "effect"
import { AgentsRepo } from "../agents/AgentsRepo.ts"
import { openHeaders } from "../agents/McpHeaders.ts"
import { newMessageId } from "../chat/MessageIds.ts"
import { noWrites, ServerTools } from "../chat/ServerTools.ts"
import type { OfferedTools, ServerToolsShape } from "../chat/ServerTools.ts"
import { CredentialKeys } from "../secrets/CredentialKeys.ts"
import { recordMcpCall, recordMcpListFailure } from "../telemetry/Metrics.ts"
import type { McpTarget } from "./McpClients.ts"
import { McpClients } from "./McpClients.ts"
import { toolError, toolMessage } from "./McpResults.ts"

/** One of a server's tools as the model is offered it. */
interface OfferedTool {
  readonly name: string
  readonly tool: Tool
  readonly schema: ToolSchema
  readonly approval: boolean
}

/** What of `server`'s tools is offered: its allowlist's with a name the provider takes; `left`: why others are not. */
const offeredOf = (server: McpServerView, tools: ReadonlyArray<Tool>) => {
  const allowed = server.tools === undefined ? undefined : new Set(server.tools)
  const offered: Array<OfferedTool> = []
  const left: Array<string> = []
  for (const tool of tools) {
    if (allowed !== undefined && !allowed.has(tool.name)) continue
    const name = mcpToolName(server.name, tool.name)
    if (name === undefined || offered.some((o) => o.name === name)) {
      left.push(`${tool.name} (${name === undefined ? "its name is over 64 characters" : `another tool is named ${name}`})`)
      continue
    }
    offered.push({
      name,
      tool,
      schema: { name, description: tool.description ?? tool.title ?? "", parameters: [], inputSchema: tool.inputSchema as JsonObject },
      approval: needsApproval(server, tool.name)
    })
  }
  return { offered, left }
}

export const make = Effect.gen(function*() {
  const clients = yield* McpClients
  const keys = yield* CredentialKeys
  const agents = yield* AgentsRepo

  /** The agent's servers as targets, their headers opened (a server whose headers cannot be opened is left out). */
  const targetsOf = (agent: AgentDefinition) =>
    Effect.gen(function*() {
      const servers = agent.mcpServers ?? []
      if (servers.length === 0) return []
      const needed = servers.some((s) => s.headerNames.length > 0)
      const headers = needed
        ? yield* openHeaders(agent.name).pipe(
          Effect.provideService(CredentialKeys, keys),
          Effect.provideService(AgentsRepo, agents),
          Effect.catch((error) =>
            Effect.as(Effect.logWarning(`agent ${agent.name}: its MCP servers' headers are unavailable: ${error.error}`), undefined)
          )
        )
        : new Map<string, Readonly<Record<string, string>>>()
      return servers.flatMap((server): ReadonlyArray<{ readonly server: McpServerView; readonly target: McpTarget }> => {
        const opened = headers?.get(server.name)
        if (server.headerNames.length > 0 && opened === undefined) return []
        return [{ server, target: { agent: agent.name, server: server.name, url: server.url, headers: opened ?? {} } }]
      })
    })

  /** What the turn is offered of one server; said once, when the turn starts (a server that fails is left out). */
  const listed = (server: McpServerView, target: McpTarget) =>
    clients.tools(target).pipe(
      Effect.map((tools) => offeredOf(server, tools)),
      Effect.tap(({ left }) =>
        left.length === 0 ? Effect.void : Effect.logWarning(`MCP server ${server.name}: not offered: ${left.join(", ")}`)
      ),
      Effect.map(({ offered }) => offered),
      Effect.catch((failure) =>
        Effect.as(
          Effect.andThen(
            Effect.sync(() => recordMcpListFailure(server.name)),
            Effect.logWarning(`MCP server ${server.name} of agent ${target.agent} is left out of this turn: ${failure.message}`)
          ),
          []
        )
      )
    )

  const offeredTo = (agent: AgentDefinition): Effect.Effect<OfferedTools> =>
    Effect.gen(function*() {
      const targets = yield* targetsOf(agent)
      if (targets.length === 0) return { schemas: [], instructions: undefined }
      const offered = (yield* Effect.forEach(targets, ({ server, target }) => listed(server, target), { concurrency: "unbounded" })).flat()
      return {
        schemas: offered.map((o) => o.schema),
        instructions: undefined,
        remote: offered.map((o) => o.name),
        approval: offered.filter((o) => o.approval).map((o) => o.name),
        prefixes: (agent.mcpServers ?? []).map((server) => `${server.name}${MCP_TOOL_SEPARATOR}`)
      }
    })

  /** One call run against its server (`found`: its tool, or why it has none now); never fails. */
  const run = (call: ToolCall, found: { readonly tool: OfferedTool; readonly target: McpTarget } | string) =>
    Effect.gen(function*() {
      const id = newMessageId()
      const now = yield* Clock.currentTimeMillis
      if (typeof found === "string") return toolError(call, found, id, now)
      if (call.invalidArgs !== undefined) return toolError(call, `invalid arguments for ${call.name}: ${call.invalidArgs}`, id, now)
      const { target, tool } = found
      const answered = yield* Effect.result(clients.call(target, tool.tool.name, call.args))
      const seconds = ((yield* Clock.currentTimeMillis) - now) / 1000
      if (answered._tag === "Failure") {
        recordMcpCall(target.server, answered.failure.reason, seconds)
        return toolError(call, answered.failure.message, id, now)
      }
      const message = toolMessage(call, answered.success, id, now)
      recordMcpCall(
        target.server,
        message.toolResult?.error === undefined ? "ok" : answered.success.isError === true ? "tool_error" : "too_large",
        seconds
      )
      return message
    })

  const execute: ServerToolsShape["execute"] = (turn, calls) =>
    Effect.gen(function*() {
      // The servers of the calls, their lists as this turn was offered them (cached: no request),
      // quietly: what was not offered was said when the turn started.
      const named = new Set(calls.map((call) => call.name.split(MCP_TOOL_SEPARATOR)[0]))
      const targets = (yield* targetsOf(turn.agent)).filter(({ server }) => named.has(server.name))
      const offered = new Map<string, { readonly tool: OfferedTool; readonly target: McpTarget }>()
      // A server that cannot be listed now has no tool now: its calls are answered so.
      yield* Effect.forEach(targets, ({ server, target }) =>
        Effect.match(clients.tools(target), {
          onFailure: () => undefined,
          onSuccess: (tools) => {
            for (const tool of offeredOf(server, tools).offered) offered.set(tool.name, { tool, target })
          }
        }), { concurrency: "unbounded", discard: true })
      const results: ReadonlyArray<ChatMessage> = yield* Effect.forEach(calls, (call) =>
        run(call, offered.get(call.name) ?? `${call.name} is not a tool of this agent's MCP servers now`), { concurrency: 8 })
      return { results, dispatched: [], writes: noWrites }
    })

  return ServerTools.of({
    offeredTo,
    // Every MCP tool's name has the separator; no job kind's or client tool's offered as a server tool does.
    handles: (name) => name.includes(MCP_TOOL_SEPARATOR),
    execute,
    turnEnded: () => noWrites
  })
})

/** The MCP tools alone as chat's server tools (tests; the server offers them beside the job tools). */
export const layerNoDeps = Layer.effect(ServerTools, make)
