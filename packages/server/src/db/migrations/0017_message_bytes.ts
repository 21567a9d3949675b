/**
 * Each stored message's size (the bytes of its JSON as the database writes it), taken when it is
 * stored, so that a turn's opening sums a chat's transcript (`CHAT_TRANSCRIPT_MAX_BYTES`) without
 * rendering every message again. Rows stored before have none: they are measured when summed
 * (`coalesce`), rather than all rewritten here, which on a large table would hold the upgrade.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE chat_messages ADD COLUMN bytes integer`
})
