/**
 * Which agent a turn runs: a built-in one (seeded in code: BuiltInAgents.ts)
 * or a stored one, by name; `DEFAULT_AGENT` names the default (the built-in
 * `media-editor` unless set). Stored agents are read per lookup
 * (a primary-key read in `AgentsRepo`), so every replica uses an agent's
 * latest definition on its next turn.
 */
import type { AgentDefinition, CredentialUnavailable, McpServerBody } from "@switchboard/domain"
import { AgentBuiltIn, AgentExists, AgentNotFound, InvalidRequest } from "@switchboard/domain"
import { Context, Effect, Layer } from "effect"
import { CredentialKeys } from "../secrets/CredentialKeys.ts"
import { DefaultAgentSetting } from "./AgentSettings.ts"
import { AgentsRepo } from "./AgentsRepo.ts"
import { builtInAgents } from "./BuiltInAgents.ts"
import { sealHeaders } from "./McpHeaders.ts"

const seeded = [...builtInAgents.values()].map((agent) => agent.definition)
const seededNamed = (name: string) => builtInAgents.get(name)?.definition

const notFound = (name: string) => new AgentNotFound({ error: `No agent named "${name}"`, agent: name })
/** A 400 naming the first job kind of the agent that is neither built in nor defined. */
const unknownKinds = (agent: AgentDefinition, missing: ReadonlyArray<string>) => {
  const index = agent.jobKinds.findIndex((kind) => missing.includes(kind))
  return new InvalidRequest({
    error: `Invalid request body: jobKinds[${index}]: no sub-agent kind "${agent.jobKinds[index]}" (built in or defined with PUT /admin/subagents/{kind})`
  })
}

const builtIn = (name: string) =>
  new AgentBuiltIn({ error: `"${name}" is a built-in agent: it cannot be replaced or deleted`, agent: name })

export class Agents extends Context.Service<Agents, {
  /** The agent turns use when they name none (and a chat's first turn did not). */
  readonly defaultName: string
  /** The agent of that name, built in or stored. */
  get(name: string): Effect.Effect<AgentDefinition, AgentNotFound>
  /** The built-in agents first, then the stored ones by name. */
  list: Effect.Effect<ReadonlyArray<AgentDefinition>>
  /** `servers`: its MCP servers as written, headers included (sealed here). */
  create(
    agent: AgentDefinition,
    servers: ReadonlyArray<McpServerBody>
  ): Effect.Effect<void, AgentExists | AgentBuiltIn | CredentialUnavailable | InvalidRequest>
  /** Creates or replaces. */
  put(
    agent: AgentDefinition,
    servers: ReadonlyArray<McpServerBody>
  ): Effect.Effect<{ readonly existed: boolean }, AgentBuiltIn | CredentialUnavailable | InvalidRequest>
  /** The stored agent of that name (never a built-in one). */
  stored(name: string): Effect.Effect<AgentDefinition | undefined>
  remove(name: string): Effect.Effect<void, AgentNotFound | AgentBuiltIn>
}>()("switchboard/server/agents/Agents") {
  static readonly layerNoDeps = Layer.effect(Agents, Effect.gen(function*() {
    const repo = yield* AgentsRepo
    const keys = yield* CredentialKeys
    const defaultName = yield* DefaultAgentSetting.config
    const seal = (agent: AgentDefinition, servers: ReadonlyArray<McpServerBody>) =>
      sealHeaders(agent, servers).pipe(Effect.provideService(CredentialKeys, keys))
    return Agents.of({
      defaultName,
      get: (name) => {
        const seed = seededNamed(name)
        return seed !== undefined
          ? Effect.succeed(seed)
          : repo.get(name).pipe(Effect.flatMap((agent) => agent === undefined ? Effect.fail(notFound(name)) : Effect.succeed(agent)))
      },
      list: Effect.map(repo.list, (stored) => [...seeded, ...stored]),
      create: (agent, servers) =>
        builtInAgents.has(agent.name)
          ? Effect.fail(builtIn(agent.name))
          : seal(agent, servers).pipe(
            Effect.flatMap((headers) => repo.create(agent, headers)),
            Effect.flatMap(({ created, missingKinds }): Effect.Effect<void, AgentExists | InvalidRequest> =>
              missingKinds.length > 0
                ? Effect.fail(unknownKinds(agent, missingKinds))
                : created
                ? Effect.void
                : Effect.fail(new AgentExists({ error: `An agent named "${agent.name}" exists`, agent: agent.name }))
            )
          ),
      put: (agent, servers) =>
        builtInAgents.has(agent.name)
          ? Effect.fail(builtIn(agent.name))
          : seal(agent, servers).pipe(
            Effect.flatMap((headers) => repo.put(agent, headers)),
            Effect.flatMap(({ existed, missingKinds }) =>
              missingKinds.length > 0 ? Effect.fail(unknownKinds(agent, missingKinds)) : Effect.succeed({ existed })
            )
          ),
      stored: (name) => builtInAgents.has(name) ? Effect.succeed(undefined) : repo.get(name),
      remove: (name) =>
        builtInAgents.has(name)
          ? Effect.fail(builtIn(name))
          : repo.remove(name).pipe(Effect.flatMap((removed) => removed ? Effect.void : Effect.fail(notFound(name))))
    })
  })).pipe(Layer.orDie)

  static readonly layer = Agents.layerNoDeps.pipe(Layer.provideMerge(Layer.mergeAll(AgentsRepo.layer, CredentialKeys.layer)))
}
