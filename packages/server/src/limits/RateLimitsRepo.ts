/**
 * The rate limits' counters, in SQL (migration 0011): the database is where
 * every replica counts, so the limit is the same whichever replica a request
 * reaches, and the database's clock decides the windows, not the replicas'.
 *
 * One statement a request (`take`): it reads the bucket's previous minute,
 * and increments the current minute's counter only when the request fits —
 * a refused request counts for nothing, so a client retrying in a loop is let
 * through as soon as its earlier requests age out. The check and the
 * increment are one `INSERT … ON CONFLICT DO UPDATE … WHERE`: concurrent
 * requests of one bucket are serialized by the row's lock, and the `WHERE` is
 * evaluated against the row as the previous one left it, so no two replicas
 * both take the last place.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { traced } from "@switchboard/domain"

/** What the counters said about one request. */
export interface Take {
  /** Whether the request fits the limit (and was counted). */
  readonly accepted: boolean
  /** Requests counted in the current minute, this one included when accepted. */
  readonly current: number
  /** Requests counted in the minute before. */
  readonly previous: number
  /** Seconds since the current minute began (database time). */
  readonly elapsed: number
}

/** Windows older than this are never read again. */
const KEEP = "2 minutes"

export class RateLimitsRepo extends Context.Service<RateLimitsRepo, {
  /**
   * Counts one request of `bucket` unless it would exceed `limit` over the last minute, estimated
   * as the current minute's count plus the previous minute's weighted by how much of it is still
   * within the last 60 seconds (rounded up: the estimate never lets more through than it saw).
   */
  take(bucket: string, limit: number): Effect.Effect<Take>
  /** Deletes the windows no request reads any more; answers how many. */
  prune: Effect.Effect<number>
}>()("switchboard/server/limits/RateLimitsRepo") {
  static readonly layer = Layer.effect(RateLimitsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return RateLimitsRepo.of({
      take: Effect.fnUntraced(function*(bucket, limit) {
        const rows = yield* sql<{ accepted: number | null; current: number | null; previous: number; elapsed: number; carried: number }>`
          WITH clock AS (
            SELECT date_trunc('minute', now()) AS minute,
              extract(epoch FROM now() - date_trunc('minute', now()))::float8 AS elapsed
          ), previous AS (
            SELECT coalesce((
              SELECT r.count FROM rate_limits r, clock
              WHERE r.bucket = ${bucket} AND r.window_start = clock.minute - interval '1 minute'
            ), 0) AS n
          ), carried AS (
            SELECT ceil(previous.n * (60 - clock.elapsed) / 60)::bigint AS n FROM previous, clock
          ), hit AS (
            INSERT INTO rate_limits AS r (bucket, window_start, count)
            SELECT ${bucket}, clock.minute, 1 FROM clock, carried WHERE carried.n < ${limit}::bigint
            ON CONFLICT (bucket, window_start) DO UPDATE SET count = r.count + 1
              WHERE r.count + (SELECT n FROM carried) < ${limit}::bigint
            RETURNING r.count
          )
          SELECT (SELECT count FROM hit) AS accepted,
            (SELECT r.count FROM rate_limits r, clock WHERE r.bucket = ${bucket} AND r.window_start = clock.minute) AS current,
            (SELECT n FROM previous) AS previous,
            (SELECT elapsed FROM clock) AS elapsed,
            (SELECT n FROM carried)::int AS carried`
        const row = rows[0]!
        return {
          accepted: row.accepted !== null,
          // A refusal's `current` is read from the statement's snapshot, which a burst of concurrent
          // requests has outdated (often 0): the refusal itself says the locked row held at least
          // `limit - carried`, and a wait computed from less would send the client back too early.
          current: row.accepted ?? Math.max(row.current ?? 0, limit - Number(row.carried)),
          previous: row.previous,
          elapsed: row.elapsed
        }
      }, Effect.orDie, traced("RateLimitsRepo.take")),

      prune: Effect.gen(function*() {
        const result = yield* sql`DELETE FROM rate_limits WHERE window_start < now() - ${KEEP}::interval`.raw
        return (result as { readonly rowCount?: number }).rowCount ?? 0
      }).pipe(Effect.orDie, traced("RateLimitsRepo.prune"))
    })
  }))
}
