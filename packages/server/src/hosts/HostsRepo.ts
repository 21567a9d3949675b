/**
 * Registered hosts, in SQL. A host's token is generated here, returned once,
 * and stored only as its SHA-256: 32 random bytes need no slow hash, and the
 * database never holds anything that authenticates as the host.
 *
 * Revocation and rotation take effect at the next request on every replica:
 * `authenticate` reads the row each time (no cache to invalidate). A revoked
 * host keeps its row, so its tasks and decisions still name it.
 */
import type { HostView } from "@switchboard/domain"
import { HostNotFound, traced } from "@switchboard/domain"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import { iso, isoOrNull } from "../db/SqlTime.ts"
import { gaveUp, stampDecisions, TaskMaxAttemptsSetting } from "./TaskAttempts.ts"

/** The 404 of a host id that names no host (every admin route about a host answers it the same). */
export const hostNotFound = (hostId: string) => new HostNotFound({ error: `No host with id "${hostId}"`, hostId })

/** `sbh_` + 32 random bytes, base64url: recognisable in a config file, 256 bits of secret. */
export const newHostToken = () => `sbh_${randomBytes(32).toString("base64url")}`

export const hashToken = (token: string): Buffer => createHash("sha256").update(token, "utf8").digest()

export const newId = (prefix: string) => `${prefix}_${randomBytes(10).toString("hex")}`

interface HostRow {
  readonly id: string
  readonly name: string
  readonly created_at: Date
  readonly last_heartbeat_at: Date | null
  readonly revoked_at: Date | null
}

const toView = (row: HostRow): HostView => ({
  hostId: row.id,
  name: row.name,
  createdAt: iso(row.created_at),
  lastHeartbeatAt: isoOrNull(row.last_heartbeat_at),
  revokedAt: isoOrNull(row.revoked_at)
})

/** What revoking a host came to: `undefined` when there is no such host. */
export interface Revocation {
  readonly host: HostView
  /** The running tasks sent back to the queue by this revocation (none when it was revoked already). */
  readonly requeued: ReadonlyArray<string>
  /** Its running tasks that were on their last attempt (`TASK_MAX_ATTEMPTS`): failed, not re-queued. */
  readonly failed: ReadonlyArray<string>
}

export class HostsRepo extends Context.Service<HostsRepo, {
  /** A new host and its token (the only time the token exists outside the host). */
  create(name: string): Effect.Effect<{ readonly hostId: string; readonly token: string }>
  list: Effect.Effect<ReadonlyArray<HostView>>
  exists(hostId: string): Effect.Effect<boolean>
  /** The host a bearer token belongs to, if any and not revoked. */
  authenticate(token: string): Effect.Effect<{ readonly hostId: string; readonly name: string } | undefined>
  /**
   * Revokes the host (its token refused from now on) and, in the same transaction, sends its
   * running tasks back to the queue as `attempt + 1` (failed, when that was their last attempt) and
   * frees the tasks reserved for it (any host may claim them). Revoking a revoked host changes nothing.
   */
  revoke(hostId: string): Effect.Effect<Revocation | undefined>
  /** A new token for the host, the old one refused from now on; "revoked" for a revoked host. */
  rotateToken(hostId: string): Effect.Effect<{ readonly hostId: string; readonly token: string } | "revoked" | undefined>
  /** Records the heartbeat; answers the database's time. */
  heartbeat(hostId: string): Effect.Effect<string>
}>()("switchboard/server/hosts/HostsRepo") {
  static readonly layer = Layer.effect(HostsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const maxAttempts = yield* TaskMaxAttemptsSetting.config
    const revokedOutput = JSON.stringify(gaveUp(maxAttempts, "revoked"))
    return HostsRepo.of({
      create: Effect.fnUntraced(function*(name) {
        const hostId = newId("host")
        const token = newHostToken()
        yield* sql`INSERT INTO hosts ${sql.insert({ id: hostId, name, token_hash: hashToken(token) })}`
        return { hostId, token }
      }, Effect.orDie, traced("HostsRepo.create")),
      list: sql<HostRow>`SELECT id, name, created_at, last_heartbeat_at, revoked_at FROM hosts ORDER BY created_at, id`.pipe(
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
          SELECT id, name, token_hash FROM hosts WHERE token_hash = ${hash} AND revoked_at IS NULL`
        const row = rows[0]
        // The index found the row by hash; the constant-time comparison is the actual check.
        if (row === undefined || !timingSafeEqual(Buffer.from(row.token_hash), hash)) return undefined
        return { hostId: row.id, name: row.name }
      }, Effect.orDie, traced("HostsRepo.authenticate")),
      revoke: Effect.fnUntraced(function*(hostId) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          // The host row first: a claim of this host locks it too (see TasksRepo.claim), so a claim
          // either committed before (its task is re-queued below) or finds the host revoked.
          const revoked = yield* sql<HostRow & { readonly was_active: boolean }>`
            UPDATE hosts h SET revoked_at = coalesce(h.revoked_at, now())
            FROM (SELECT id, revoked_at IS NULL AS was_active FROM hosts WHERE id = ${hostId} FOR UPDATE) old
            WHERE h.id = old.id
            RETURNING h.id, h.name, h.created_at, h.last_heartbeat_at, h.revoked_at, old.was_active`
          const row = revoked[0]
          if (row === undefined) return undefined
          if (!row.was_active) return { host: toView(row), requeued: [], failed: [] }
          // As a claim would take it after its lease: attempt + 1, so the host's next call for the
          // old attempt is refused; the reservation dropped, or no host could ever claim it; no holder
          // (the claim sets it), or the task view would name the revoked host as the task's host.
          // A task on its last attempt ends instead, as its lease running out would have ended it.
          const ended = yield* sql<{ id: string; status: string }>`
            UPDATE tasks t SET
              status = CASE WHEN o.last THEN 'failed' ELSE 'queued' END,
              attempt = CASE WHEN o.last THEN t.attempt ELSE t.attempt + 1 END,
              terminal_at = CASE WHEN o.last THEN now() END,
              output = CASE WHEN o.last THEN ${revokedOutput}::jsonb ELSE t.output END,
              host_id = CASE WHEN o.last THEN t.host_id END,
              lease_expires_at = NULL,
              reserved_host_id = CASE WHEN t.reserved_host_id = ${hostId} THEN NULL ELSE t.reserved_host_id END
            FROM (SELECT id, attempt >= ${maxAttempts} AS last FROM tasks WHERE host_id = ${hostId} AND status = 'running') o
            WHERE t.id = o.id
            RETURNING t.id, t.status`
          const failed = ended.filter((r) => r.status === "failed").map((r) => r.id)
          if (failed.length > 0) yield* stampDecisions(sql, failed)
          yield* sql`UPDATE tasks SET reserved_host_id = NULL WHERE reserved_host_id = ${hostId} AND status = 'queued'`
          return { host: toView(row), requeued: ended.filter((r) => r.status === "queued").map((r) => r.id), failed }
        }))
      }, Effect.orDie, traced("HostsRepo.revoke")),
      rotateToken: Effect.fnUntraced(function*(hostId) {
        const token = newHostToken()
        const rows = yield* sql<{ revoked: boolean }>`
          UPDATE hosts SET token_hash = CASE WHEN revoked_at IS NULL THEN ${hashToken(token)} ELSE token_hash END
          WHERE id = ${hostId}
          RETURNING revoked_at IS NOT NULL AS revoked`
        const row = rows[0]
        if (row === undefined) return undefined
        return row.revoked ? "revoked" as const : { hostId, token }
      }, Effect.orDie, traced("HostsRepo.rotateToken")),
      heartbeat: Effect.fnUntraced(function*(hostId) {
        const rows = yield* sql<{ now: Date }>`
          UPDATE hosts SET last_heartbeat_at = now() WHERE id = ${hostId} RETURNING last_heartbeat_at AS now`
        // The host exists: its token was just authenticated (hosts are never deleted).
        return iso(rows[0]!.now)
      }, Effect.orDie, traced("HostsRepo.heartbeat"))
    })
  }))
}
