/**
 * Agents' MCP servers (docs/tools.md): the headers an operator gives a server (an
 * `Authorization`, say) are credentials, sealed like a provider profile's key — AES-256-GCM under
 * the key named by `credential_key_id`, `agent {name} mcp {server}` as associated data — one row
 * per server, so a key rotation re-seals them one compare-and-set at a time. The definition keeps
 * their names only. Deleting the agent deletes them.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE agent_mcp_headers (
      agent text NOT NULL REFERENCES agents (name) ON DELETE CASCADE,
      server text NOT NULL,
      ciphertext bytea NOT NULL,
      nonce bytea NOT NULL,
      tag bytea NOT NULL,
      credential_key_id text NOT NULL,
      PRIMARY KEY (agent, server)
    )`
})
