/**
 * Users (docs/users.md). A chat's user is part of its key (`chat/ChatKey.ts`: `<user>/<chatId>`, the
 * bare id for `default`), so the chats stored before keep their ids and are the user `default`'s.
 * `chat_activity` is what a user's list reads, newest first: written by the statement that opens a
 * turn (under the chat's marker, so by one turn at a time), never by a rewrite of the chat's row.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE chat_activity (
    chat_id text PRIMARY KEY REFERENCES chats (id) ON DELETE CASCADE,
    user_id text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now())
  )`
  yield* sql`CREATE INDEX chat_activity_user ON chat_activity (user_id, updated_at DESC, chat_id DESC)`
  yield* sql`INSERT INTO chat_activity (chat_id, user_id, updated_at)
    SELECT c.id, 'default', date_trunc('milliseconds',
      coalesce((SELECT max(m.created_at) FROM chat_messages m WHERE m.chat_id = c.id), c.created_at))
    FROM chats c`
})
