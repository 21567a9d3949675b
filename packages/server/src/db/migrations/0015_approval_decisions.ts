/**
 * Approvals (docs/tools.md): a pending approval lives in the transcript (the assistant message's
 * `metadata.approvals`); its decision is a row here, keyed by the chat (whose key holds its user)
 * and the approval — the primary key is what makes a second decision a 409 on every replica. The
 * row is the continuation's claim too: `owner` and `lease_until` say which replica runs it and
 * until when (a replica that died leaves it to the others' sweep), `state` how far it went:
 * `decided` (the tool not started), `running` (started: never started again), `done` (the
 * continuation turn ended). The partial index is the sweep's: only unfinished rows are in it.
 * The second index finds the messages that ask for approvals (the gauge, a chat's pending ones).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE approval_decisions (
      chat_id text NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
      approval_id text NOT NULL,
      tool_call_id text NOT NULL,
      approved boolean NOT NULL,
      reason text,
      state text NOT NULL CHECK (state IN ('decided', 'running', 'done')),
      owner text,
      lease_until timestamptz NOT NULL DEFAULT now(),
      decided_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (chat_id, approval_id)
    )`
  yield* sql`CREATE INDEX approval_decisions_due ON approval_decisions (lease_until) WHERE state <> 'done'`
  yield* sql`CREATE INDEX chat_messages_approvals ON chat_messages (chat_id) WHERE (message->'metadata') ? 'approvals'`
})
