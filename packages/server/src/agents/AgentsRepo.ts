/**
 * Stored agents, in SQL: one row per agent, its definition as JSON. Read by
 * name on every turn that names a stored agent (a primary-key lookup), so a
 * change applies to the next turn on every replica with no cache to
 * invalidate. The built-in agent is never stored (see Agents.ts).
 *
 * Beside each agent, its MCP servers' headers, sealed (`agent_mcp_headers`,
 * `McpHeadersRows.ts`): written with the definition in one transaction, read
 * only by the turn that connects to the server, deleted with the agent.
 */
import type { AgentDefinition } from "@switchboard/domain"
import { AgentDefinition as AgentDefinitionSchema, isBuiltInKind, traced } from "@switchboard/domain"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { HeadersRow, HeadersWrite, SealedHeaders } from "./McpHeadersRows.ts"
import { headersRow, readMcpHeaders, toSealedHeaders, writeMcpHeaders } from "./McpHeadersRows.ts"

export type { HeadersWrite, SealedHeaders }

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
  /**
   * False when an agent of that name exists. `missingKinds`: the job kinds it names that are
   * neither built in nor defined (then nothing is written).
   */
  create(agent: AgentDefinition, headers: HeadersWrite): Effect.Effect<{ readonly created: boolean; readonly missingKinds: ReadonlyArray<string> }>
  /** Creates or replaces; answers whether it existed (`missingKinds`: as for `create`). */
  put(agent: AgentDefinition, headers: HeadersWrite): Effect.Effect<{ readonly existed: boolean; readonly missingKinds: ReadonlyArray<string> }>
  /** False when there was none. */
  remove(name: string): Effect.Effect<boolean>
  /** The agent's MCP servers' sealed headers. */
  mcpHeaders(agent: string): Effect.Effect<ReadonlyArray<SealedHeaders>>
  /** Every agent's, for a key rotation (at most 8 a stored agent). */
  readonly allMcpHeaders: Effect.Effect<ReadonlyArray<SealedHeaders>>
  /** Compare-and-set on the key id it was sealed under: false when another rotation got there first. */
  resealMcpHeaders(headers: SealedHeaders, previousKeyId: string): Effect.Effect<boolean>
}>()("switchboard/server/agents/AgentsRepo") {
  static readonly layer = Layer.effect(AgentsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const json = (agent: AgentDefinition) => JSON.stringify(agent)
    /** The agent's headers as `headers` says, in the transaction that wrote its definition. */
    const writeHeaders = (agent: string, headers: HeadersWrite) => writeMcpHeaders(sql, agent, headers)
    /**
     * The defined kinds the agent names that do not exist, the existing ones locked (FOR SHARE) until
     * the transaction ends: a kind's delete (which locks its row to check that no agent names it)
     * cannot slip between this check and the agent's write.
     */
    const missingKinds = (agent: AgentDefinition) =>
      Effect.gen(function*() {
        const defined = agent.jobKinds.filter((kind) => !isBuiltInKind(kind))
        if (defined.length === 0) return []
        const found = yield* sql<{ readonly kind: string }>`
          SELECT kind FROM subagent_kinds WHERE kind IN ${sql.in(defined)} FOR SHARE`
        const have = new Set(found.map((row) => row.kind))
        return defined.filter((kind) => !have.has(kind))
      })
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
      create: Effect.fnUntraced(function*(agent, headers) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          const missing = yield* missingKinds(agent)
          if (missing.length > 0) return { created: false, missingKinds: missing }
          const rows = yield* sql`
            INSERT INTO agents (name, definition) VALUES (${agent.name}, ${json(agent)}::jsonb)
            ON CONFLICT (name) DO NOTHING
            RETURNING name`
          if (rows.length === 1) yield* writeHeaders(agent.name, headers)
          return { created: rows.length === 1, missingKinds: [] }
        }))
      }, Effect.orDie, traced("AgentsRepo.create")),
      put: Effect.fnUntraced(function*(agent, headers) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          const missing = yield* missingKinds(agent)
          if (missing.length > 0) return { existed: false, missingKinds: missing }
          // xmax = 0 on the returned row: it was inserted, not updated.
          const rows = yield* sql<{ readonly inserted: boolean }>`
            INSERT INTO agents (name, definition) VALUES (${agent.name}, ${json(agent)}::jsonb)
            ON CONFLICT (name) DO UPDATE SET definition = EXCLUDED.definition, updated_at = now()
            RETURNING (xmax = 0) AS inserted`
          yield* writeHeaders(agent.name, headers)
          return { existed: rows[0]?.inserted !== true, missingKinds: [] }
        }))
      }, Effect.orDie, traced("AgentsRepo.put")),
      mcpHeaders: (agent) => readMcpHeaders(sql, agent).pipe(Effect.orDie, traced("AgentsRepo.mcpHeaders")),
      allMcpHeaders: sql<HeadersRow>`
        SELECT agent, server, ciphertext, nonce, tag, credential_key_id FROM agent_mcp_headers ORDER BY agent, server`.pipe(
        Effect.map((rows) => rows.map(toSealedHeaders)),
        Effect.orDie,
        traced("AgentsRepo.allMcpHeaders")
      ),
      resealMcpHeaders: Effect.fnUntraced(function*(headers, previousKeyId) {
        const row = headersRow(headers)
        const rows = yield* sql`
          UPDATE agent_mcp_headers SET ciphertext = ${row.ciphertext}, nonce = ${row.nonce}, tag = ${row.tag},
            credential_key_id = ${row.credential_key_id}
          WHERE agent = ${headers.agent} AND server = ${headers.server} AND credential_key_id = ${previousKeyId}
          RETURNING server`
        return rows.length === 1
      }, Effect.orDie, traced("AgentsRepo.resealMcpHeaders")),
      remove: Effect.fnUntraced(function*(name) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          const rows = yield* sql`DELETE FROM agents WHERE name = ${name} RETURNING name`
          yield* writeHeaders(name, { sealed: [], kept: [] })
          return rows.length === 1
        }))
      }, Effect.orDie, traced("AgentsRepo.remove"))
    })
  }))
}
