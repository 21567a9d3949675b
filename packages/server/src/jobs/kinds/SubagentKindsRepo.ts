/**
 * Defined sub-agent kinds, in SQL (`subagent_kinds`, migration 0016): one row
 * per kind, its definition as JSON, read by name whenever a turn offers an
 * agent's kinds or dispatches a job of one — a primary-key read, so a change
 * applies on every replica at once with no cache to invalidate. Beside each
 * kind, its MCP servers' sealed headers (`McpHeadersRows.ts`, owner
 * `subagent:<kind>`), written and deleted in the same transaction.
 */
import type { SubagentDefinition } from "@switchboard/domain"
import { SubagentDefinition as SubagentDefinitionSchema, traced } from "@switchboard/domain"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { HeadersWrite } from "../../agents/McpHeadersRows.ts"
import { subagentOwner, writeMcpHeaders } from "../../agents/McpHeadersRows.ts"

interface KindRow {
  readonly definition: unknown
}

const decode = Schema.decodeUnknownSync(SubagentDefinitionSchema)

/** A row written by this code decodes; one that does not is a defect worth a 500, not a guess. */
export const toSubagentDefinition = (stored: unknown): SubagentDefinition =>
  decode(typeof stored === "string" ? JSON.parse(stored) : stored)

export class SubagentKindsRepo extends Context.Service<SubagentKindsRepo, {
  /** The defined kinds of these names (those that exist), by name. */
  get(kinds: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<SubagentDefinition>>
  /** Every defined kind, by name. */
  readonly list: Effect.Effect<ReadonlyArray<SubagentDefinition>>
  /** Creates or replaces; answers whether it existed. */
  put(definition: SubagentDefinition, headers: HeadersWrite): Effect.Effect<{ readonly existed: boolean }>
  /**
   * Deletes the kind unless an agent names it: `removed` false when there was none; `namedBy` the
   * agents that name it (then nothing was deleted). One statement, so no agent write naming the
   * kind slips between the check and the delete (an agent's write locks the kinds it names).
   */
  remove(kind: string): Effect.Effect<{ readonly removed: boolean; readonly namedBy: ReadonlyArray<string> }>
}>()("switchboard/server/jobs/kinds/SubagentKindsRepo") {
  static readonly layer = Layer.effect(SubagentKindsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return SubagentKindsRepo.of({
      get: Effect.fnUntraced(function*(kinds) {
        if (kinds.length === 0) return []
        const rows = yield* sql<KindRow>`SELECT definition FROM subagent_kinds WHERE kind IN ${sql.in(kinds)} ORDER BY kind`
        return rows.map((row) => toSubagentDefinition(row.definition))
      }, Effect.orDie, traced("SubagentKindsRepo.get")),
      list: sql<KindRow>`SELECT definition FROM subagent_kinds ORDER BY kind`.pipe(
        Effect.map((rows) => rows.map((row) => toSubagentDefinition(row.definition))),
        Effect.orDie,
        traced("SubagentKindsRepo.list")
      ),
      put: Effect.fnUntraced(function*(definition, headers) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          // xmax = 0 on the returned row: it was inserted, not updated.
          const rows = yield* sql<{ readonly inserted: boolean }>`
            INSERT INTO subagent_kinds (kind, definition) VALUES (${definition.kind}, ${JSON.stringify(definition)})
            ON CONFLICT (kind) DO UPDATE SET definition = EXCLUDED.definition, updated_at = now()
            RETURNING (xmax = 0) AS inserted`
          yield* writeMcpHeaders(sql, subagentOwner(definition.kind), headers)
          return { existed: rows[0]?.inserted !== true }
        }))
      }, Effect.orDie, traced("SubagentKindsRepo.put")),
      remove: Effect.fnUntraced(function*(kind) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          // The kind's row locked first: an agent write naming it (which locks it FOR SHARE) waits or went first.
          const locked = yield* sql`SELECT kind FROM subagent_kinds WHERE kind = ${kind} FOR UPDATE`
          if (locked.length === 0) return { removed: false, namedBy: [] }
          const naming = yield* sql<{ readonly name: string }>`
            SELECT name FROM agents WHERE definition->'jobKinds' ? ${kind} ORDER BY name LIMIT 20`
          if (naming.length > 0) return { removed: false, namedBy: naming.map((row) => row.name) }
          yield* sql`DELETE FROM subagent_kinds WHERE kind = ${kind}`
          yield* writeMcpHeaders(sql, subagentOwner(kind), { sealed: [], kept: [] })
          return { removed: true, namedBy: [] }
        }))
      }, Effect.orDie, traced("SubagentKindsRepo.remove"))
    })
  }))
}
