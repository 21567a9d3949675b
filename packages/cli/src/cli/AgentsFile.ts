/**
 * A declarative file of agents (`switchboard admin agents apply FILE`): JSON
 * or YAML, `{ agents: [ … ] }` or a bare list, each entry what `POST
 * /admin/agents` takes (`NewAgent`). Checked here, against the domain's
 * schema, before anything is sent: an error names the file and the path in it
 * (`agents[1].systemPrompt`), and an unknown key is an error rather than a
 * silently dropped setting.
 *
 * `planApply` compares the file with the server's agents so that applying is
 * idempotent: only the agents that differ are written (`PUT`), and applying
 * the same file twice writes nothing the second time — but for an agent whose
 * MCP servers are given header values: those are write-only (the server
 * answers their names only), so such an agent is written every time.
 */
import { agentDefinitionOf, givesHeaderValues, keptHeaderNames, NewAgent } from "@switchboard/domain"
import type { AgentBody, AgentDefinition } from "@switchboard/domain"
import { Effect, FileSystem, Schema } from "effect"
import * as YAML from "yaml"
import { CliFailure } from "./CliFailure.ts"

const AgentsDocument = Schema.Struct({ agents: Schema.Array(NewAgent) })
const AgentsList = Schema.Array(NewAgent)
const strict = { onExcessProperty: "error" } as const

/** Schema paths read as `agents[0].systemPrompt`, as a person writes them in the file. */
const readablePaths = (message: string): string =>
  message.replace(/\bat (\[[^\n]*\])/g, (_, path: string) =>
    "at " + path.replace(/\["([A-Za-z_$][\w$]*)"\]/g, ".$1").replace(/^\./, ""))

const parse = (file: string, text: string): unknown => {
  if (file.endsWith(".json")) return JSON.parse(text)
  // YAML 1.2 is a superset of JSON: any other extension is read as YAML.
  return YAML.parse(text)
}

/** The agents of `file`, validated; fails with a `CliFailure` naming the file and, for a bad entry, its path. */
export const loadAgentsFile = (file: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const invalid = (why: string) => new CliFailure({ message: `Invalid agents file ${file}: ${why}` })
    const text = yield* fs.readFileString(file).pipe(
      Effect.mapError((e) => new CliFailure({ message: `Cannot read agents file ${file}: ${e.message}` }))
    )
    const document = yield* Effect.try({
      try: () => parse(file, text),
      catch: (e) => invalid(`not ${file.endsWith(".json") ? "JSON" : "YAML"} (${e instanceof Error ? e.message : String(e)})`)
    })
    const agents = Array.isArray(document)
      ? yield* Schema.decodeUnknownEffect(AgentsList)(document, strict).pipe(Effect.mapError((e) => invalid(readablePaths(e.message))))
      : typeof document === "object" && document !== null && "agents" in document
      ? (yield* Schema.decodeUnknownEffect(AgentsDocument)(document, strict).pipe(
        Effect.mapError((e) => invalid(readablePaths(e.message)))
      )).agents
      : yield* Effect.fail(invalid("expected `agents:` with a list of agents, or a list of agents"))
    const seen = new Set<string>()
    for (const agent of agents) {
      if (seen.has(agent.name)) return yield* Effect.fail(invalid(`agent "${agent.name}" is defined twice`))
      seen.add(agent.name)
    }
    return agents
  })

export type ApplyAction = "created" | "updated" | "unchanged"

export interface PlannedAgent {
  readonly name: string
  readonly action: ApplyAction
  /** What `PUT /admin/agents/{name}` takes. */
  readonly body: AgentBody
}

/** Key order does not make two definitions differ. */
const canonical = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(canonical)
    : typeof value === "object" && value !== null
    ? Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])]))
    : value

const sameDefinition = (a: AgentDefinition, b: AgentDefinition): boolean =>
  JSON.stringify(canonical(a)) === JSON.stringify(canonical(b))

/**
 * What applying `agents` over the server's `existing` ones does, agent by
 * agent, in the file's order; fails when the file names a built-in agent (the
 * server refuses to replace it).
 */
export const planApply = (
  agents: ReadonlyArray<NewAgent>,
  existing: ReadonlyArray<AgentDefinition>
): Effect.Effect<ReadonlyArray<PlannedAgent>, CliFailure> =>
  Effect.gen(function*() {
    const byName = new Map(existing.map((agent) => [agent.name, agent]))
    const planned: Array<PlannedAgent> = []
    for (const { name, ...body } of agents) {
      const current = byName.get(name)
      if (current?.builtIn === true) {
        return yield* Effect.fail(new CliFailure({ message: `agent "${name}" is built in: it cannot be replaced (choose another name)` }))
      }
      const action: ApplyAction = current === undefined
        ? "created"
        : !givesHeaderValues(body.mcpServers) && sameDefinition(current, agentDefinitionOf(name, body, keptHeaderNames(current)))
        ? "unchanged"
        : "updated"
      planned.push({ name, action, body })
    }
    return planned
  })
