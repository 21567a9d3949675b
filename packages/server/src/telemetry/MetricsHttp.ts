/**
 * `GET /metrics`: the process's metrics (`Metrics.ts`) as Prometheus text,
 * beside the API as the docs are (not an API operation: a scraper's, not a
 * client's). With `METRICS_TOKEN` set, it needs `Authorization: Bearer
 * $METRICS_TOKEN` (401 `unauthenticated` otherwise, compared in constant
 * time); unset, it is open, as `/healthz` is.
 *
 * The jobs are the database's, read at scrape time by one statement: how many
 * are in each phase and status, and how long the oldest result has waited for
 * its wake turn (the steer backlog). Every replica reports the same numbers
 * (use `max`, not `sum`, across replicas). The statement is bounded
 * (`statement_timeout`): a scrape of a database that does not answer in time
 * says so (`switchboard_metrics_database_up 0`) instead of waiting, and the
 * process's own metrics are served all the same. Other features' figures
 * (`DatabaseGauges`: the approvals pending) are read beside it, each bounded.
 */
import { Context, Effect, Metric } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { PrometheusMetrics } from "effect/observability"
import { SqlClient } from "effect/sql"
import { DatabaseGauges } from "./DatabaseGauges.ts"
import type { DatabaseGauge } from "./DatabaseGauges.ts"
import { tokenMatches } from "../http/ChatAuth.ts"
import { MetricsTokenSetting } from "./TelemetrySettings.ts"
import { untraced } from "./Tracing.ts"

export const METRICS_ROUTES = [{ method: "GET", path: "/metrics" }] as const

const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

/** The longest the jobs' statement may run, in milliseconds. */
export const JOBS_STATEMENT_MS = 2_000

const PHASES = ["run", "wake", "settled"] as const
const STATUSES = ["running", "done", "error"] as const

interface JobsRow {
  readonly phase: string | null
  readonly status: string | null
  readonly n: number
  readonly oldest: number | null
}

/** The database's numbers, as gauges of a registry of their own: made per scrape, never stale. */
const databaseText = (rows: ReadonlyArray<JobsRow> | undefined, features: ReadonlyArray<readonly [DatabaseGauge, number | undefined]>) => {
  const context = Context.make(Metric.MetricRegistry, new Map())
  const gauge = (name: string, description: string, value: number, attributes?: Record<string, string>) =>
    Metric.gauge(name, { description, ...(attributes === undefined ? {} : { attributes }) }).updateUnsafe(value, context)
  gauge("switchboard_metrics_database_up", "Whether the database answered this scrape's statement in time (1) or not (0)", rows === undefined ? 0 : 1)
  for (const [feature, value] of features) if (value !== undefined) gauge(feature.name, feature.description, value)
  if (rows !== undefined) {
    const counts = new Map(rows.filter((r) => r.phase !== null).map((r) => [`${r.phase} ${r.status}`, r.n]))
    for (const phase of PHASES) {
      for (const status of STATUSES) {
        // A pipeline's phase has one public status but its end (settled: done or error).
        if ((phase === "settled") !== (status !== "running")) continue
        gauge("switchboard_jobs", "Jobs in the database by phase (run, wake, settled) and public status", counts.get(`${phase} ${status}`) ?? 0, { phase, status })
      }
    }
    const oldest = rows.find((r) => r.phase === null)?.oldest ?? null
    gauge(
      "switchboard_jobs_oldest_wake_seconds",
      "Age of the oldest job result still waiting for its wake turn (0: none waits)",
      oldest === null ? 0 : Math.max(0, oldest)
    )
  }
  return PrometheusMetrics.formatUnsafe(context)
}

const unauthenticated = HttpServerResponse.jsonUnsafe(
  { error: "Missing or invalid bearer token (METRICS_TOKEN)", code: "unauthenticated" },
  { status: 401 }
)

const bearer = (header: string | undefined) => /^Bearer\s+(.*)$/i.exec(header ?? "")?.[1]?.trim() ?? ""

export const layer = HttpRouter.use(Effect.fnUntraced(function*(router) {
  const sql = yield* SqlClient.SqlClient
  const required = yield* MetricsTokenSetting.config
  const gauges = yield* DatabaseGauges

  const jobs = sql.withTransaction(Effect.gen(function*() {
    yield* sql`SELECT set_config('statement_timeout', ${String(JOBS_STATEMENT_MS)}, true)`
    return yield* sql<JobsRow>`
      SELECT phase, status, count(*)::int AS n, NULL::float8 AS oldest FROM jobs GROUP BY phase, status
      UNION ALL
      SELECT NULL, NULL, 0, extract(epoch FROM clock_timestamp() - min(finished_at))::float8 FROM jobs WHERE phase = 'wake'`
  })).pipe(
    untraced,
    Effect.timeout(JOBS_STATEMENT_MS + 1_000),
    Effect.tapCause((cause) => Effect.logWarning("/metrics: the jobs' statement failed", cause)),
    Effect.orElseSucceed(() => undefined)
  )

  yield* router.add("GET", "/metrics", Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (required !== undefined && !tokenMatches(required, bearer(request.headers["authorization"]))) return unauthenticated
    const [rows, features] = yield* Effect.all([
      jobs,
      Effect.forEach(gauges, (g) =>
        g.read.pipe(
          untraced,
          Effect.timeout(JOBS_STATEMENT_MS),
          Effect.tapCause((cause) => Effect.logWarning(`/metrics: ${g.name}'s statement failed`, cause)),
          Effect.map((value): readonly [DatabaseGauge, number | undefined] => [g, value]),
          Effect.orElseSucceed((): readonly [DatabaseGauge, number | undefined] => [g, undefined])
        ), { concurrency: "unbounded" })
    ], { concurrency: "unbounded" })
    const database = databaseText(rows, features)
    const own = yield* PrometheusMetrics.format()
    return HttpServerResponse.text(own + database, { contentType: CONTENT_TYPE, headers: { "cache-control": "no-store" } })
  }))
}))

