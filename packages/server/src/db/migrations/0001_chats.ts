/**
 * Chats and their transcripts. A message is stored whole as jsonb (the wire
 * shape is the record); `seq` gives the transcript its order, and the
 * `(chat_id, id)` key makes re-sending a history idempotent.
 *
 * `chat_turns` is the in-flight marker: one row per chat while a turn runs,
 * with an expiry, so a crashed replica's marker lapses instead of wedging
 * the chat.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE chats (
    id text PRIMARY KEY,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE TABLE chat_messages (
    seq bigserial PRIMARY KEY,
    chat_id text NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    id text NOT NULL,
    role text NOT NULL,
    message jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (chat_id, id)
  )`
  yield* sql`CREATE INDEX chat_messages_chat_seq_idx ON chat_messages (chat_id, seq)`
  yield* sql`CREATE TABLE chat_turns (
    chat_id text PRIMARY KEY REFERENCES chats (id) ON DELETE CASCADE,
    turn_id text NOT NULL,
    started_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
  )`
})
