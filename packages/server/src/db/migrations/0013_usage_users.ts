/**
 * Usage per user (docs/usage.md, docs/users.md): every provider call a user's request, wake turn or
 * job made is counted under the user, so a user's daily budget (`USER_DAILY_TOKENS`) is one indexed
 * read, and `GET /admin/usage?groupBy=user` a grouping. A call without a chat (a plain turn) has its
 * user too, so the user is part of a row's key. Everything counted before users were known was the
 * user `default`'s; planner decisions are hosts', no user's.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE usage_hourly ADD COLUMN user_id text NOT NULL DEFAULT ''`
  yield* sql`UPDATE usage_hourly SET user_id = 'default' WHERE kind IN ('chat', 'wake', 'job')`
  yield* sql`ALTER TABLE usage_hourly DROP CONSTRAINT usage_hourly_pkey`
  yield* sql`ALTER TABLE usage_hourly ADD PRIMARY KEY (hour, kind, user_id, chat_id, job_id, host_id, task_id, profile_id, model)`
  yield* sql`CREATE INDEX usage_hourly_user ON usage_hourly (user_id, hour) WHERE user_id <> ''`
})
