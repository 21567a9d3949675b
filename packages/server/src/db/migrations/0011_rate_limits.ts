/**
 * The rate limits' counters (`CHAT_RPM`, `PLANNER_HOST_RPM`; limits/RateLimits.ts),
 * where every replica counts: one row per bucket (a hashed bearer token, a
 * client address, a host) and one-minute window, incremented in place. Only
 * the current and the previous window are ever read; older ones are deleted
 * by each replica's sweep, so the table holds about two rows per caller of
 * the last two minutes. No index on `window_start`: the sweep reads a table
 * that small once a minute, and the request path has one index less to write.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE rate_limits (
    bucket text NOT NULL,
    window_start timestamptz NOT NULL,
    count integer NOT NULL,
    PRIMARY KEY (bucket, window_start)
  )`
})
