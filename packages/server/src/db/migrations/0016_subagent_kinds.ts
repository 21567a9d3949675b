/**
 * Sub-agent kinds as definitions (docs/subagents.md): one row per kind an operator defined, its
 * definition as JSON text (the built-in kinds are code, never stored). Text, not jsonb: jsonb
 * keeps no key order, and the order of a result schema's `properties` is the order its results
 * are shown in.
 *
 * A kind's MCP servers' headers are sealed in `agent_mcp_headers`, under the owner
 * `subagent:<kind>` (no agent's name has a colon): one table, so a key rotation re-seals them
 * with the agents'. That table's rows are no longer tied to an agent row; the repositories
 * delete an owner's headers with it.
 *
 * A job of a defined kind carries the definition it was dispatched with (`jobs.definition`): it
 * runs that, on whichever replica claims it, even if the kind is replaced or deleted meanwhile.
 *
 * A job whose sub-agent's MCP call needs a user's approval is parked: its sub-agent's
 * conversation saved (`checkpoint`), the call it waits on (`waiting_for`, shown in the job
 * record), no lease, and the time its call is denied unless decided (`parked_until`). The claims
 * skip it while it waits; the decision (a row of `approval_decisions`) makes it claimable again.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE subagent_kinds (
      kind text PRIMARY KEY,
      definition text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`ALTER TABLE agent_mcp_headers DROP CONSTRAINT IF EXISTS agent_mcp_headers_agent_fkey`
  yield* sql`ALTER TABLE jobs ADD COLUMN definition text`
  yield* sql`ALTER TABLE jobs ADD COLUMN checkpoint jsonb`
  yield* sql`ALTER TABLE jobs ADD COLUMN waiting_for jsonb`
  yield* sql`ALTER TABLE jobs ADD COLUMN parked_until timestamptz`
})
