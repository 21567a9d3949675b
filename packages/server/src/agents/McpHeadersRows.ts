/**
 * MCP servers' headers at rest (`agent_mcp_headers`): one sealed row per
 * owner and server, the owner an agent's name or `subagent:<kind>` for a
 * sub-agent kind's servers (migration 0016). Written in the transaction that
 * writes the owner's definition; read by the run that connects to the server.
 */
import { Array as Arr, Effect } from "effect"
import type { SqlClient, SqlError } from "effect/sql"
import type { Sealed } from "../secrets/CredentialKeys.ts"

/** One MCP server's headers of an owner, sealed (their plaintext: the headers as JSON). */
export interface SealedHeaders {
  /** The agent's name, or `subagent:<kind>`. */
  readonly agent: string
  readonly server: string
  readonly sealed: Sealed
}

export interface HeadersRow {
  readonly agent: string
  readonly server: string
  readonly ciphertext: Uint8Array
  readonly nonce: Uint8Array
  readonly tag: Uint8Array
  readonly credential_key_id: string
}

export const toSealedHeaders = (row: HeadersRow): SealedHeaders => ({
  agent: row.agent,
  server: row.server,
  sealed: { ciphertext: row.ciphertext, nonce: row.nonce, tag: row.tag, keyId: row.credential_key_id }
})

export const headersRow = ({ agent, sealed, server }: SealedHeaders) => ({
  agent,
  server,
  ciphertext: Buffer.from(sealed.ciphertext),
  nonce: Buffer.from(sealed.nonce),
  tag: Buffer.from(sealed.tag),
  credential_key_id: sealed.keyId
})

/** What a write does to the owner's sealed headers: these servers' replaced, those not `kept` removed. */
export interface HeadersWrite {
  readonly sealed: ReadonlyArray<SealedHeaders>
  /** Servers whose stored headers stay as they are. */
  readonly kept: ReadonlyArray<string>
}

/** The owner of a sub-agent kind's headers. */
export const subagentOwner = (kind: string) => `subagent:${kind}`

/** The owner's headers as `headers` says (inside the transaction that writes its definition). */
export const writeMcpHeaders = (
  sql: SqlClient.SqlClient,
  owner: string,
  headers: HeadersWrite
): Effect.Effect<void, SqlError.SqlError> =>
  Effect.gen(function*() {
    const kept = [...headers.kept, ...headers.sealed.map((h) => h.server)]
    yield* kept.length === 0
      ? sql`DELETE FROM agent_mcp_headers WHERE agent = ${owner}`
      : sql`DELETE FROM agent_mcp_headers WHERE agent = ${owner} AND server NOT IN ${sql.in(kept)}`
    const rows = headers.sealed.map((h): Record<string, unknown> => headersRow(h))
    if (Arr.isReadonlyArrayNonEmpty(rows)) {
      yield* sql`
        INSERT INTO agent_mcp_headers ${sql.insert(rows)}
        ON CONFLICT (agent, server) DO UPDATE SET ciphertext = EXCLUDED.ciphertext, nonce = EXCLUDED.nonce,
          tag = EXCLUDED.tag, credential_key_id = EXCLUDED.credential_key_id`
    }
  })

export const readMcpHeaders = (sql: SqlClient.SqlClient, owner: string): Effect.Effect<ReadonlyArray<SealedHeaders>, SqlError.SqlError> =>
  sql<HeadersRow>`
    SELECT agent, server, ciphertext, nonce, tag, credential_key_id FROM agent_mcp_headers WHERE agent = ${owner}`.pipe(
    Effect.map((rows) => rows.map(toSealedHeaders))
  )
