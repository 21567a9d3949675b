/**
 * Which agent a turn runs: the built-in `media-editor` (the spec's video
 * editor, defined in code) or a stored one, by name; `DEFAULT_AGENT` names
 * the default (`media-editor` unless set). Stored agents are read per lookup
 * (a primary-key read in `AgentsRepo`), so every replica uses an agent's
 * latest definition on its next turn.
 */
import type { AgentDefinition } from "@switchboard/domain"
import { AgentBuiltIn, AgentExists, AgentNotFound, BUILT_IN_AGENT, JobKind, TranscribeVideo } from "@switchboard/domain"
import { Config, Context, Effect, Layer } from "effect"
import { BUILT_IN_PROMPT_DESCRIPTION } from "./SystemPrompt.ts"
import { AgentsRepo } from "./AgentsRepo.ts"

/** The spec's agent: its prompt is `buildSystemPrompt(context)`, its tool `transcribe_video`, its context `AgentContext`. */
export const mediaEditor: AgentDefinition = {
  name: BUILT_IN_AGENT,
  description: "The media editing assistant: transcribes the project's videos and dispatches research, demos and figures.",
  systemPrompt: BUILT_IN_PROMPT_DESCRIPTION,
  tools: [TranscribeVideo],
  jobKinds: [...JobKind.literals],
  builtIn: true
}

const notFound = (name: string) => new AgentNotFound({ error: `No agent named "${name}"`, agent: name })
const builtIn = (name: string) =>
  new AgentBuiltIn({ error: `"${name}" is the built-in agent: it cannot be replaced or deleted`, agent: name })

export class Agents extends Context.Service<Agents, {
  /** The agent turns use when they name none (and a chat's first turn did not). */
  readonly defaultName: string
  /** The agent of that name, built in or stored. */
  get(name: string): Effect.Effect<AgentDefinition, AgentNotFound>
  /** The built-in agent first, then the stored ones by name. */
  list: Effect.Effect<ReadonlyArray<AgentDefinition>>
  create(agent: AgentDefinition): Effect.Effect<void, AgentExists | AgentBuiltIn>
  /** Creates or replaces. */
  put(agent: AgentDefinition): Effect.Effect<{ readonly existed: boolean }, AgentBuiltIn>
  remove(name: string): Effect.Effect<void, AgentNotFound | AgentBuiltIn>
}>()("switchboard/server/agents/Agents") {
  static readonly layerNoDeps = Layer.effect(Agents, Effect.gen(function*() {
    const repo = yield* AgentsRepo
    // Checked at start-up (system/Settings.ts): a name of the right shape; whether it exists is each turn's to say.
    const defaultName = yield* Config.String("DEFAULT_AGENT").pipe(
      Config.map((value) => value.trim() === "" ? BUILT_IN_AGENT : value.trim()),
      Config.withDefault(BUILT_IN_AGENT)
    )
    return Agents.of({
      defaultName,
      get: (name) =>
        name === BUILT_IN_AGENT
          ? Effect.succeed(mediaEditor)
          : repo.get(name).pipe(Effect.flatMap((agent) => agent === undefined ? Effect.fail(notFound(name)) : Effect.succeed(agent))),
      list: Effect.map(repo.list, (stored) => [mediaEditor, ...stored]),
      create: (agent) =>
        agent.name === BUILT_IN_AGENT
          ? Effect.fail(builtIn(agent.name))
          : repo.create(agent).pipe(Effect.flatMap((created) =>
            created ? Effect.void : Effect.fail(new AgentExists({ error: `An agent named "${agent.name}" exists`, agent: agent.name }))
          )),
      put: (agent) => agent.name === BUILT_IN_AGENT ? Effect.fail(builtIn(agent.name)) : repo.put(agent),
      remove: (name) =>
        name === BUILT_IN_AGENT
          ? Effect.fail(builtIn(name))
          : repo.remove(name).pipe(Effect.flatMap((removed) => removed ? Effect.void : Effect.fail(notFound(name))))
    })
  })).pipe(Layer.orDie)

  static readonly layer = Agents.layerNoDeps.pipe(Layer.provide(AgentsRepo.layer))
}
