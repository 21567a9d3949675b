/**
 * `chats.generation`: which life of a chat id a row is. A chat the operator
 * deletes may be created again, under the same id, by the next turn for it;
 * a turn (or a wake) still running for the deleted chat must not write into
 * the new one. Every turn captures the generation when it is accepted and
 * writes only to the chat with that id *and* that generation.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE chats ADD COLUMN generation uuid NOT NULL DEFAULT gen_random_uuid()`
})
