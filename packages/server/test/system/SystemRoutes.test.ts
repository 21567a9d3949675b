/** Liveness and readiness as an orchestrator probes them; `/` as a browser opens it when the console is not built. */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { rawRequest } from "../support/RawHttp.ts"
import { baseUrl, layerTestServer, request } from "../support/TestServer.ts"
import { migrationCount } from "../../src/db/Migrations.ts"

describe("system routes", () => {
  // WEB_DIR: a console build that does not exist (WebConsole.test.ts serves one).
  layer(layerTestServer(makeFakeProvider().layer, { WEB_DIR: "/nonexistent/switchboard-web" }), { excludeTestServices: true })("probes", (it) => {
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

    it.effect("without a console build, GET and HEAD / redirect to /docs (302); any other unknown path stays a JSON 404", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        for (const method of ["GET", "HEAD"]) {
          const root = yield* rawRequest(base + "/", { method })
          assert.strictEqual(root.status, 302, method)
          assert.strictEqual(root.headers.location, "/docs", method)
        }
        const post = yield* rawRequest(base + "/", { method: "POST" })
        assert.strictEqual(post.status, 405)
        assert.strictEqual(post.headers.allow, "GET, HEAD, OPTIONS")
        for (const path of ["/index.html", "/docs/", "/favicon.ico", "/api", "/chats/c1", "/operator/hosts", "/sandbox.html", "/assets/index.js"]) {
          const unknown = yield* request(path)
          assert.strictEqual(unknown.status, path === "/docs/" ? 200 : 404, path)
          if (unknown.status === 404) assert.strictEqual(unknown.json.code, "not_found", path)
        }
      }))
  })
})
