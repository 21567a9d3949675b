/**
 * Stored agents, in SQL: one row per agent, its definition as JSON. Read by
 * name on every turn that names a stored agent (a primary-key lookup), so a
 * change applies to the next turn on every replica with no cache to
 * invalidate. The built-in agent is never stored (see Agents.ts).
 */
import type { AgentDefinition } from "@switchboard/domain"
import { AgentDefinition as AgentDefinitionSchema, traced } from "@switchboard/domain"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"

interface AgentRow {
  readonly definition: unknown
}

const decode = Schema.decodeUnknownSync(AgentDefinitionSchema)

/** A row written by this code decodes; one that does not is a defect worth a 500, not a guess. */
const toDefinition = (row: AgentRow): AgentDefinition =>
  decode(typeof row.definition === "string" ? JSON.parse(row.definition) : row.definition)

export class AgentsRepo extends Context.Service<AgentsRepo, {
  get(name: string): Effect.Effect<AgentDefinition | undefined>
  /** Every stored agent, by name. */
  list: Effect.Effect<ReadonlyArray<AgentDefinition>>
  /** False when an agent of that name exists. */
  create(agent: AgentDefinition): Effect.Effect<boolean>
  /** Creates or replaces; answers whether it existed. */
  put(agent: AgentDefinition): Effect.Effect<{ readonly existed: boolean }>
  /** False when there was none. */
  remove(name: string): Effect.Effect<boolean>
}>()("switchboard/server/agents/AgentsRepo") {
  static readonly layer = Layer.effect(AgentsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const json = (agent: AgentDefinition) => JSON.stringify(agent)
    return AgentsRepo.of({
      get: Effect.fnUntraced(function*(name) {
        const rows = yield* sql<AgentRow>`SELECT definition FROM agents WHERE name = ${name}`
        return rows[0] === undefined ? undefined : toDefinition(rows[0])
      }, Effect.orDie, traced("AgentsRepo.get")),
      list: sql<AgentRow>`SELECT definition FROM agents ORDER BY name`.pipe(
        Effect.map((rows) => rows.map(toDefinition)),
        Effect.orDie,
        traced("AgentsRepo.list")
      ),
      create: Effect.fnUntraced(function*(agent) {
        const rows = yield* sql`
          INSERT INTO agents (name, definition) VALUES (${agent.name}, ${json(agent)}::jsonb)
          ON CONFLICT (name) DO NOTHING
          RETURNING name`
        return rows.length === 1
      }, Effect.orDie, traced("AgentsRepo.create")),
      put: Effect.fnUntraced(function*(agent) {
        // xmax = 0 on the returned row: it was inserted, not updated.
        const rows = yield* sql<{ readonly inserted: boolean }>`
          INSERT INTO agents (name, definition) VALUES (${agent.name}, ${json(agent)}::jsonb)
          ON CONFLICT (name) DO UPDATE SET definition = EXCLUDED.definition, updated_at = now()
          RETURNING (xmax = 0) AS inserted`
        return { existed: rows[0]?.inserted !== true }
      }, Effect.orDie, traced("AgentsRepo.put")),
      remove: Effect.fnUntraced(function*(name) {
        const rows = yield* sql`DELETE FROM agents WHERE name = ${name} RETURNING name`
        return rows.length === 1
      }, Effect.orDie, traced("AgentsRepo.remove"))
    })
  }))
}
