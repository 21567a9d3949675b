import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { maintainTables, maintenanceDue } from "../../src/db/EmbeddedVacuum.ts"
import { eventually } from "../support/JobsHelpers.ts"
import { TestDatabase } from "../support/TestDatabase.ts"

describe("what a table is due (autovacuum's default thresholds)", () => {
  it("a vacuum past 50 dead rows + 20 % of the live ones, an analyse past 50 changed rows + 10 %", () => {
    assert.strictEqual(maintenanceDue({ table: "t", live: 1000, dead: 250, modified: 150 }), undefined)
    assert.strictEqual(maintenanceDue({ table: "t", live: 1000, dead: 251, modified: 150 }), "VACUUM")
    assert.strictEqual(maintenanceDue({ table: "t", live: 1000, dead: 0, modified: 151 }), "ANALYZE")
    assert.strictEqual(maintenanceDue({ table: "t", live: 1000, dead: 251, modified: 151 }), "VACUUM (ANALYZE)")
    assert.strictEqual(maintenanceDue({ table: "t", live: 0, dead: 51, modified: 51 }), "VACUUM (ANALYZE)")
  })
})

// A table of its own, with PostgreSQL's autovacuum off for it: on both backends only
// `maintainTables` reclaims its space, as on the embedded database for every table.
const heapBytes = SqlClient.SqlClient.use((sql) =>
  sql<{ bytes: number }>`SELECT pg_relation_size('churn')::float8 AS bytes`.pipe(Effect.map((rows) => rows[0]!.bytes))
)

/**
 * A turn's marker's life, `n` times: a row inserted, then deleted. In one transaction, so on
 * PostgreSQL one connection reports both to the statistics at once: the vacuum then sees the table's
 * dead rows and its changes together.
 */
const churn = (round: number, n: number) =>
  SqlClient.SqlClient.use((sql) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* sql`INSERT INTO churn (id, body) SELECT ${`r${round}-`} || g, repeat('x', 200) FROM generate_series(1, ${n}) AS g`
      yield* sql`DELETE FROM churn WHERE id LIKE ${`r${round}-%`}`
    }))
  )

// PostgreSQL's statistics reach the shared view up to a second after a transaction; PGlite's at once.
const churnVacuumed = eventually(
  maintainTables,
  (ran) => ran.some((r) => r.table === "churn"),
  "the churn table vacuumed"
)

describe("the embedded database's vacuum", () => {
  it.live("vacuums the tables with dead rows, so their space is used again instead of the files growing", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE churn (id text PRIMARY KEY, body text NOT NULL) WITH (autovacuum_enabled = false)`

      yield* churn(1, 2000)
      const grown = yield* heapBytes
      assert.isAbove(grown, 200_000, "2,000 rows of 200 bytes took their pages")
      const ran = yield* churnVacuumed
      assert.deepStrictEqual(ran.find((r) => r.table === "churn"), { table: "churn", maintenance: "VACUUM (ANALYZE)" })
      assert.strictEqual(yield* heapBytes, 0, "the dead rows were at the table's end: its pages given back")

      // Without the vacuum the second round would take as many pages again; with it, the same ones.
      yield* churn(2, 2000)
      assert.isAtMost(yield* heapBytes, grown)
      yield* churnVacuumed
      // A table with nothing to reclaim is left alone.
      assert.isFalse((yield* maintainTables).some((r) => r.table === "churn"))
      yield* churn(3, 2000)
      assert.isAtMost(yield* heapBytes, grown)
    }).pipe(Effect.provide(TestDatabase)))
})
