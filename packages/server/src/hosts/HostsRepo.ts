/**
 * Registered hosts, in SQL. A host's token is generated here, returned once,
 * and stored only as its SHA-256: 32 random bytes need no slow hash, and the
 * database never holds anything that authenticates as the host.
 */
import type { HostView } from "@switchboard/domain"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import { iso, isoOrNull } from "../db/SqlTime.ts"
import { traced } from "../system/Spans.ts"

/** `sbh_` + 32 random bytes, base64url: recognisable in a config file, 256 bits of secret. */
export const newHostToken = () => `sbh_${randomBytes(32).toString("base64url")}`

export const hashToken = (token: string): Buffer => createHash("sha256").update(token, "utf8").digest()

export const newId = (prefix: string) => `${prefix}_${randomBytes(10).toString("hex")}`

interface HostRow {
  readonly id: string
  readonly name: string
  readonly created_at: Date
  readonly last_heartbeat_at: Date | null
}

const toView = (row: HostRow): HostView => ({
  hostId: row.id,
  name: row.name,
  createdAt: iso(row.created_at),
  lastHeartbeatAt: isoOrNull(row.last_heartbeat_at)
})

export class HostsRepo extends Context.Service<HostsRepo, {
  /** A new host and its token (the only time the token exists outside the host). */
  create(name: string): Effect.Effect<{ readonly hostId: string; readonly token: string }>
  list: Effect.Effect<ReadonlyArray<HostView>>
  exists(hostId: string): Effect.Effect<boolean>
  /** The host a bearer token belongs to, if any. */
  authenticate(token: string): Effect.Effect<{ readonly hostId: string; readonly name: string } | undefined>
  /** Records the heartbeat; answers the database's time. */
  heartbeat(hostId: string): Effect.Effect<string>
}>()("switchboard/server/hosts/HostsRepo") {
  static readonly layer = Layer.effect(HostsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return HostsRepo.of({
      create: Effect.fnUntraced(function*(name) {
        const hostId = newId("host")
        const token = newHostToken()
        yield* sql`INSERT INTO hosts ${sql.insert({ id: hostId, name, token_hash: hashToken(token) })}`
        return { hostId, token }
      }, Effect.orDie, traced("HostsRepo.create")),
      list: sql<HostRow>`SELECT id, name, created_at, last_heartbeat_at FROM hosts ORDER BY created_at, id`.pipe(
        Effect.map((rows) => rows.map(toView)),
        Effect.orDie,
        traced("HostsRepo.list")
      ),
      exists: Effect.fnUntraced(function*(hostId) {
        const rows = yield* sql`SELECT 1 FROM hosts WHERE id = ${hostId}`
        return rows.length > 0
      }, Effect.orDie, traced("HostsRepo.exists")),
      authenticate: Effect.fnUntraced(function*(token) {
        if (token === "") return undefined
        const hash = hashToken(token)
        const rows = yield* sql<{ id: string; name: string; token_hash: Uint8Array }>`
          SELECT id, name, token_hash FROM hosts WHERE token_hash = ${hash}`
        const row = rows[0]
        // The index found the row by hash; the constant-time comparison is the actual check.
        if (row === undefined || !timingSafeEqual(Buffer.from(row.token_hash), hash)) return undefined
        return { hostId: row.id, name: row.name }
      }, Effect.orDie, traced("HostsRepo.authenticate")),
      heartbeat: Effect.fnUntraced(function*(hostId) {
        const rows = yield* sql<{ now: Date }>`
          UPDATE hosts SET last_heartbeat_at = now() WHERE id = ${hostId} RETURNING last_heartbeat_at AS now`
        // The host exists: its token was just authenticated (hosts are never deleted).
        return iso(rows[0]!.now)
      }, Effect.orDie, traced("HostsRepo.heartbeat"))
    })
  }))
}
