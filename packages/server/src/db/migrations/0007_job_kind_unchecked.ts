/**
 * `jobs.kind` is no longer checked by the database: the application checks
 * it against its registry of job kinds (jobs/JobKinds.ts) — a job is recorded
 * only of a registered kind, and claimed or listed only by a server that
 * knows its kind.
 *
 * The CHECK of migration 0003 listed the kinds a second time, so a new kind
 * took a migration besides its code. And the schema is shared by every
 * replica while the code is not: during a rolling deploy, the replicas still
 * on the old code would hold a list that the new code's migration had
 * already changed. With the registry as the one list, a replica leaves a job
 * of a kind it does not know to the replicas that do.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // The name PostgreSQL gave the column's CHECK in 0003 (`<table>_<column>_check`).
  yield* sql`ALTER TABLE jobs DROP CONSTRAINT IF EXISTS jobs_kind_check`
})
