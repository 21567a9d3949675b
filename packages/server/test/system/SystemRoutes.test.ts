/** Liveness and readiness as an orchestrator probes them. */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { makeFakeProvider } from "../support/FakeProvider.ts"
import { layerTestServer, request } from "../support/TestServer.ts"
import { migrationCount } from "../../src/db/Migrations.ts"

describe("system routes", () => {
  layer(layerTestServer(makeFakeProvider().layer), { excludeTestServices: true })("probes", (it) => {
    it.effect("/readyz is 503 until every migration of this build is applied; /healthz stays 200", () =>
      Effect.gen(function*() {
        const ready = yield* request("/readyz")
        assert.strictEqual(ready.status, 200)
        assert.strictEqual(ready.json.migrations, migrationCount)

        // As if this replica were newer than the database: its last migration is not applied yet.
        const sql = yield* SqlClient.SqlClient
        const removed = yield* sql<{ migration_id: number; name: string }>`
          DELETE FROM effect_sql_migrations
          WHERE migration_id = (SELECT max(migration_id) FROM effect_sql_migrations)
          RETURNING migration_id, name`
        const notReady = yield* request("/readyz")
        assert.strictEqual(notReady.status, 503)
        assert.strictEqual(notReady.json.code, "not_ready")
        assert.include(notReady.json.error, "Migrations pending")
        assert.strictEqual((yield* request("/healthz")).status, 200)

        yield* sql`INSERT INTO effect_sql_migrations (migration_id, name) VALUES (${removed[0]!.migration_id}, ${removed[0]!.name})`
        assert.strictEqual((yield* request("/readyz")).status, 200)
      }))
  })
})
