/**
 * Handlers of the agents' routes: thin, over `Agents`. The public view never
 * carries the prompt (`agentInfoOf`); every change is logged with the agent's
 * name, never its prompt, never an MCP server's headers.
 */
import { agentDefinitionOf, agentInfoOf, Api, keptHeaderNames } from "@switchboard/domain"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Agents } from "./Agents.ts"
import { checkAgent } from "./AgentCheck.ts"

export const AgentsHttp = HttpApiBuilder.group(Api, "agents", Effect.fn(function*(handlers) {
  const agents = yield* Agents
  return handlers.handleAll({
    get: ({ params }) => agents.get(params.name).pipe(Effect.map(agentInfoOf))
  })
}))

export const AgentsAdminHttp = HttpApiBuilder.group(Api, "agentsAdmin", Effect.fn(function*(handlers) {
  const agents = yield* Agents
  return handlers.handleAll({
    create: Effect.fn(function*({ payload }) {
      const { name, ...body } = payload
      const agent = yield* checkAgent(agentDefinitionOf(name, body))
      yield* agents.create(agent, body.mcpServers ?? [])
      yield* Effect.logInfo(`agent ${name} created`)
      return { name }
    }),
    put: Effect.fn(function*({ params, payload }) {
      // A server written without `headers` keeps the stored ones (same name and URL): write-only values round-trip.
      const stored = yield* agents.stored(params.name)
      const agent = yield* checkAgent(agentDefinitionOf(params.name, payload, keptHeaderNames(stored)))
      const { existed } = yield* agents.put(agent, payload.mcpServers ?? [])
      yield* Effect.logInfo(`agent ${params.name} ${existed ? "replaced" : "created"}`)
      return agent
    }),
    list: () => Effect.map(agents.list, (list) => ({ agents: list })),
    remove: Effect.fn(function*({ params }) {
      yield* agents.remove(params.name)
      yield* Effect.logInfo(`agent ${params.name} deleted`)
    })
  })
}))
