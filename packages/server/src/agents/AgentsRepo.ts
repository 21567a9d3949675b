/**
 * Stored agents, in SQL: one row per agent, its definition as JSON. Read by
 * name on every turn that names a stored agent (a primary-key lookup), so a
 * change applies to the next turn on every replica with no cache to
 * invalidate. The built-in agent is never stored (see Agents.ts).
 *
 * Beside each agent, its MCP servers' headers, sealed (`agent_mcp_headers`):
 * written with the definition in one transaction, read only by the turn that
 * connects to the server.
 */
import type { AgentDefinition } from "@switchboard/domain"
import { AgentDefinition as AgentDefinitionSchema, traced } from "@switchboard/domain"
import { Array as Arr, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { Sealed } from "../secrets/CredentialKeys.ts"

/** One MCP server's headers of an agent, sealed (their plaintext: the headers as JSON). */
export interface SealedHeaders {
  readonly agent: string
  readonly server: string
  readonly sealed: Sealed
}

interface HeadersRow {
  readonly agent: string
  readonly server: string
  readonly ciphertext: Uint8Array
  readonly nonce: Uint8Array
  readonly tag: Uint8Array
  readonly credential_key_id: string
}

const toSealedHeaders = (row: HeadersRow): SealedHeaders => ({
  agent: row.agent,
  server: row.server,
  sealed: { ciphertext: row.ciphertext, nonce: row.nonce, tag: row.tag, keyId: row.credential_key_id }
})

/** What a write does to the agent's sealed headers: these servers' replaced, those not `kept` removed. */
export interface HeadersWrite {
  readonly sealed: ReadonlyArray<SealedHeaders>
  /** Servers whose stored headers stay as they are. */
  readonly kept: ReadonlyArray<string>
}

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
  create(agent: AgentDefinition, headers: HeadersWrite): Effect.Effect<boolean>
  /** Creates or replaces; answers whether it existed. */
  put(agent: AgentDefinition, headers: HeadersWrite): Effect.Effect<{ readonly existed: boolean }>
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
    const headersRow = ({ agent, sealed, server }: SealedHeaders) => ({
      agent,
      server,
      ciphertext: Buffer.from(sealed.ciphertext),
      nonce: Buffer.from(sealed.nonce),
      tag: Buffer.from(sealed.tag),
      credential_key_id: sealed.keyId
    })
    /** The agent's headers as `headers` says, in the transaction that wrote its definition. */
    const writeHeaders = (agent: string, headers: HeadersWrite) =>
      Effect.gen(function*() {
        const kept = [...headers.kept, ...headers.sealed.map((h) => h.server)]
        yield* kept.length === 0
          ? sql`DELETE FROM agent_mcp_headers WHERE agent = ${agent}`
          : sql`DELETE FROM agent_mcp_headers WHERE agent = ${agent} AND server NOT IN ${sql.in(kept)}`
        const rows = headers.sealed.map((h): Record<string, unknown> => headersRow(h))
        if (Arr.isReadonlyArrayNonEmpty(rows)) {
          yield* sql`
            INSERT INTO agent_mcp_headers ${sql.insert(rows)}
            ON CONFLICT (agent, server) DO UPDATE SET ciphertext = EXCLUDED.ciphertext, nonce = EXCLUDED.nonce,
              tag = EXCLUDED.tag, credential_key_id = EXCLUDED.credential_key_id`
        }
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
          const rows = yield* sql`
            INSERT INTO agents (name, definition) VALUES (${agent.name}, ${json(agent)}::jsonb)
            ON CONFLICT (name) DO NOTHING
            RETURNING name`
          if (rows.length === 1) yield* writeHeaders(agent.name, headers)
          return rows.length === 1
        }))
      }, Effect.orDie, traced("AgentsRepo.create")),
      put: Effect.fnUntraced(function*(agent, headers) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          // xmax = 0 on the returned row: it was inserted, not updated.
          const rows = yield* sql<{ readonly inserted: boolean }>`
            INSERT INTO agents (name, definition) VALUES (${agent.name}, ${json(agent)}::jsonb)
            ON CONFLICT (name) DO UPDATE SET definition = EXCLUDED.definition, updated_at = now()
            RETURNING (xmax = 0) AS inserted`
          yield* writeHeaders(agent.name, headers)
          return { existed: rows[0]?.inserted !== true }
        }))
      }, Effect.orDie, traced("AgentsRepo.put")),
      mcpHeaders: Effect.fnUntraced(function*(agent) {
        const rows = yield* sql<HeadersRow>`
          SELECT agent, server, ciphertext, nonce, tag, credential_key_id FROM agent_mcp_headers WHERE agent = ${agent}`
        return rows.map(toSealedHeaders)
      }, Effect.orDie, traced("AgentsRepo.mcpHeaders")),
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
        const rows = yield* sql`DELETE FROM agents WHERE name = ${name} RETURNING name`
        return rows.length === 1
      }, Effect.orDie, traced("AgentsRepo.remove"))
    })
  }))
}
