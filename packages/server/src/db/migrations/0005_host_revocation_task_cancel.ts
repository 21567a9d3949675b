/**
 * The operator's lifecycle:
 *
 * - `hosts.revoked_at`: a revoked host keeps its row (its tasks and decisions
 *   name it), but its token is refused from then on. Authentication reads the
 *   row on every request, so every replica refuses it at once.
 * - `tasks.status` gains `cancelled`, terminal like `succeeded` and `failed`
 *   (it carries `terminal_at`, so its decisions enter the retention window).
 *   The two checks that list the statuses are replaced, by their names in
 *   0002 (PostgreSQL's defaults for unnamed checks), with named ones.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE hosts ADD COLUMN revoked_at timestamptz`
  yield* sql`ALTER TABLE tasks DROP CONSTRAINT IF EXISTS tasks_status_check`
  yield* sql`ALTER TABLE tasks DROP CONSTRAINT IF EXISTS tasks_check`
  yield* sql`ALTER TABLE tasks ADD CONSTRAINT tasks_status_check
    CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled'))`
  yield* sql`ALTER TABLE tasks ADD CONSTRAINT tasks_terminal_check
    CHECK ((status IN ('succeeded', 'failed', 'cancelled')) = (terminal_at IS NOT NULL))`
})
