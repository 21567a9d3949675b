/**
 * Which agent a turn runs: a built-in one (seeded in code: BuiltInAgents.ts)
 * or a stored one, by name; `DEFAULT_AGENT` names the default (the built-in
 * `media-editor` unless set). Stored agents are read per lookup
 * (a primary-key read in `AgentsRepo`), so every replica uses an agent's
 * latest definition on its next turn.
 */
import type { AgentDefinition } from "@switchboard/domain"
import { AgentBuiltIn, AgentExists, AgentNotFound } from "@switchboard/domain"
import { Context, Effect, Layer } from "effect"
import { DefaultAgentSetting } from "./AgentSettings.ts"
import { AgentsRepo } from "./AgentsRepo.ts"
import { builtInAgents } from "./BuiltInAgents.ts"

const seeded = [...builtInAgents.values()].map((agent) => agent.definition)
const seededNamed = (name: string) => builtInAgents.get(name)?.definition

const notFound = (name: string) => new AgentNotFound({ error: `No agent named "${name}"`, agent: name })
const builtIn = (name: string) =>
  new AgentBuiltIn({ error: `"${name}" is a built-in agent: it cannot be replaced or deleted`, agent: name })

export class Agents extends Context.Service<Agents, {
  /** The agent turns use when they name none (and a chat's first turn did not). */
  readonly defaultName: string
  /** The agent of that name, built in or stored. */
  get(name: string): Effect.Effect<AgentDefinition, AgentNotFound>
  /** The built-in agents first, then the stored ones by name. */
  list: Effect.Effect<ReadonlyArray<AgentDefinition>>
  create(agent: AgentDefinition): Effect.Effect<void, AgentExists | AgentBuiltIn>
  /** Creates or replaces. */
  put(agent: AgentDefinition): Effect.Effect<{ readonly existed: boolean }, AgentBuiltIn>
  remove(name: string): Effect.Effect<void, AgentNotFound | AgentBuiltIn>
}>()("switchboard/server/agents/Agents") {
  static readonly layerNoDeps = Layer.effect(Agents, Effect.gen(function*() {
    const repo = yield* AgentsRepo
    const defaultName = yield* DefaultAgentSetting.config
    return Agents.of({
      defaultName,
      get: (name) => {
        const seed = seededNamed(name)
        return seed !== undefined
          ? Effect.succeed(seed)
          : repo.get(name).pipe(Effect.flatMap((agent) => agent === undefined ? Effect.fail(notFound(name)) : Effect.succeed(agent)))
      },
      list: Effect.map(repo.list, (stored) => [...seeded, ...stored]),
      create: (agent) =>
        builtInAgents.has(agent.name)
          ? Effect.fail(builtIn(agent.name))
          : repo.create(agent).pipe(Effect.flatMap((created) =>
            created ? Effect.void : Effect.fail(new AgentExists({ error: `An agent named "${agent.name}" exists`, agent: agent.name }))
          )),
      put: (agent) => builtInAgents.has(agent.name) ? Effect.fail(builtIn(agent.name)) : repo.put(agent),
      remove: (name) =>
        builtInAgents.has(name)
          ? Effect.fail(builtIn(name))
          : repo.remove(name).pipe(Effect.flatMap((removed) => removed ? Effect.void : Effect.fail(notFound(name))))
    })
  })).pipe(Layer.orDie)

  static readonly layer = Agents.layerNoDeps.pipe(Layer.provide(AgentsRepo.layer))
}
