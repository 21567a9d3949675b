/**
 * The retention index gains the row id: `(task_terminal_at, id)`, still
 * partial (only decisions of terminal tasks). The sweep now deletes a batch
 * as a key range of this index — everything up to the batch's last
 * `(task_terminal_at, id)` — instead of locking each row of the batch first
 * (`FOR UPDATE SKIP LOCKED` wrote one WAL record per row more than the
 * delete itself). See `DecisionsRepo.pruneBatch`.
 *
 * The new index is built before the old one is dropped, so the sweep always
 * has one. (On a very large table, build it `CONCURRENTLY` by hand first: a
 * migration runs in a transaction, and `CREATE INDEX` blocks writes to the
 * table while it runs.)
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX IF NOT EXISTS planner_decisions_retention_key_idx ON planner_decisions (task_terminal_at, id)
    WHERE task_terminal_at IS NOT NULL`
  yield* sql`DROP INDEX IF EXISTS planner_decisions_retention_idx`
})
