/**
 * Liveness and readiness. Ready means the database answers and every
 * migration this build knows of is applied — a replica that starts against a
 * database another (older) replica is still migrating reports 503 until done.
 */
import { Api, NotReady } from "@switchboard/domain"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { SqlClient } from "effect/sql"
import { migrationCount } from "../db/Migrations.ts"
import { untraced } from "../telemetry/Tracing.ts"

export const SystemHttp = HttpApiBuilder.group(Api, "system", Effect.fn(function*(handlers) {
  const sql = yield* SqlClient.SqlClient
  const applied = sql<{ n: number }>`SELECT count(*)::int AS n FROM effect_sql_migrations`.pipe(
    Effect.map((rows) => rows[0]?.n ?? 0),
    Effect.timeout("2 seconds"),
    untraced
  )
  return handlers
    .handle("healthz", () => Effect.succeed({ status: "ok" as const }))
    .handle("readyz", () =>
      applied.pipe(
        Effect.catchCause(() => Effect.fail(new NotReady({ error: "The database does not answer" }))),
        Effect.flatMap((n) =>
          n >= migrationCount
            ? Effect.succeed({ status: "ready" as const, migrations: n })
            : Effect.fail(new NotReady({ error: `Migrations pending: ${n} of ${migrationCount} applied` }))
        )
      ))
}))
