import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { existsSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { layerEmbeddedPg } from "../../src/db/EmbeddedPostgres.ts"

const select1 = SqlClient.SqlClient.use((sql) => sql<{ n: number }>`SELECT 1::int AS n`)

describe("embedded PostgreSQL on disk", () => {
  it.live("one server per DATA_DIR: a second is refused while the first runs; the lock goes with it", () =>
    Effect.gen(function*() {
      const dataDir = join(mkdtempSync(join(tmpdir(), "switchboard-lock-")), "pgdata")
      const first = yield* Layer.build(layerEmbeddedPg(dataDir))
      assert.deepStrictEqual(yield* select1.pipe(Effect.provide(first)), [{ n: 1 }])
      assert.isTrue(existsSync(`${dataDir}.lock`))

      const second = yield* Effect.scoped(Layer.build(layerEmbeddedPg(dataDir))).pipe(Effect.flip)
      assert.strictEqual(second._tag, "DataDirInUse")
    }).pipe(Effect.scoped))

  it.live("a stale lock (its process is gone) is taken over, and data persists across restarts", () =>
    Effect.gen(function*() {
      const dataDir = join(mkdtempSync(join(tmpdir(), "switchboard-lock-")), "pgdata")
      yield* Effect.scoped(Effect.gen(function*() {
        const ctx = yield* Layer.build(layerEmbeddedPg(dataDir))
        yield* SqlClient.SqlClient.use((sql) => sql`CREATE TABLE kept (v text)`).pipe(Effect.provide(ctx))
        yield* SqlClient.SqlClient.use((sql) => sql`INSERT INTO kept VALUES ('still here')`).pipe(Effect.provide(ctx))
      }))
      assert.isFalse(existsSync(`${dataDir}.lock`), "released at shutdown")

      writeFileSync(`${dataDir}.lock`, "999999999") // a pid that does not exist
      const rows = yield* Effect.scoped(Effect.gen(function*() {
        const ctx = yield* Layer.build(layerEmbeddedPg(dataDir))
        return yield* SqlClient.SqlClient.use((sql) => sql<{ v: string }>`SELECT v FROM kept`).pipe(Effect.provide(ctx))
      }))
      assert.deepStrictEqual(rows, [{ v: "still here" }])
    }))
})
