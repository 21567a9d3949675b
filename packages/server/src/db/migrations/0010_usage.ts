/**
 * Token usage, per hour (docs/usage.md): one row per hour and per what the
 * calls served — kind, chat, job, host, task, provider profile, model —
 * added to by every replica's flush (`INSERT … ON CONFLICT DO UPDATE`), so
 * the table grows with hours × active chats and hosts, never per call. Absent
 * fields are '' rather than NULL so the primary key is the conflict target.
 * Hosts get their own budget of planner tokens.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE usage_hourly (
      hour timestamptz NOT NULL,
      kind text NOT NULL,
      chat_id text NOT NULL DEFAULT '',
      job_id text NOT NULL DEFAULT '',
      host_id text NOT NULL DEFAULT '',
      task_id text NOT NULL DEFAULT '',
      profile_id text NOT NULL DEFAULT '',
      model text NOT NULL DEFAULT '',
      calls bigint NOT NULL,
      input_tokens bigint NOT NULL,
      output_tokens bigint NOT NULL,
      cached_input_tokens bigint NOT NULL,
      PRIMARY KEY (hour, kind, chat_id, job_id, host_id, task_id, profile_id, model)
    )`
  // A host's window (its budget), a chat's or a task's totals.
  yield* sql`CREATE INDEX usage_hourly_host ON usage_hourly (host_id, hour) WHERE host_id <> ''`
  yield* sql`CREATE INDEX usage_hourly_chat ON usage_hourly (chat_id, hour) WHERE chat_id <> ''`
  yield* sql`CREATE INDEX usage_hourly_task ON usage_hourly (task_id, hour) WHERE task_id <> ''`
  yield* sql`ALTER TABLE hosts ADD COLUMN daily_tokens bigint`
})
