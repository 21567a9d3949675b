/**
 * Agents as configuration: the stored agents, and the agent each chat keeps.
 * A chat created before agents existed was the built-in `media-editor`'s (the
 * only agent there was), which is what the column's default says of it; every
 * new chat row names its agent explicitly.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE agents (
      name text PRIMARY KEY,
      definition jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`ALTER TABLE chats ADD COLUMN agent text NOT NULL DEFAULT 'media-editor'`
})
