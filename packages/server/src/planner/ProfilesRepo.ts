/**
 * Provider profiles, in SQL. The API key is stored sealed (`CredentialKeys`):
 * ciphertext, nonce and tag, with the id of the key that sealed it. At most
 * one profile is active: a partial unique index says so, and activation runs
 * both of its updates in one transaction, serialised by an advisory lock so
 * two concurrent activations cannot trip the index.
 */
import { ProfileNotFound, traced } from "@switchboard/domain"
import type { ProfileView, ProviderKind } from "@switchboard/domain"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { iso } from "../db/SqlTime.ts"
import type { Sealed } from "../secrets/CredentialKeys.ts"

/** What the planner needs of the active profile (the key still sealed). */
export interface ProfileRecord {
  readonly profileId: string
  readonly name: string
  readonly provider: ProviderKind
  readonly model: string
  readonly timeoutMs: number
  readonly baseUrl: string
  readonly sealed: Sealed
}

export interface NewProfile extends ProfileRecord {}

interface Row {
  readonly id: string
  readonly name: string
  readonly provider: ProviderKind
  readonly model: string
  readonly timeout_ms: number
  readonly base_url: string
  readonly active: boolean
  readonly credential_key_id: string
  readonly created_at: Date
}

interface SealedRow extends Row {
  readonly api_key_ciphertext: Uint8Array
  readonly api_key_nonce: Uint8Array
  readonly api_key_tag: Uint8Array
}

/** What the admin view and the sealed record share. */
const settingsOf = (row: Row) => ({
  profileId: row.id,
  name: row.name,
  provider: row.provider,
  model: row.model,
  timeoutMs: row.timeout_ms,
  baseUrl: row.base_url
})

const toView = (row: Row): ProfileView => ({
  ...settingsOf(row),
  active: row.active,
  credentialKeyId: row.credential_key_id,
  createdAt: iso(row.created_at)
})

const toRecord = (row: SealedRow): ProfileRecord => ({
  ...settingsOf(row),
  sealed: {
    ciphertext: row.api_key_ciphertext,
    nonce: row.api_key_nonce,
    tag: row.api_key_tag,
    keyId: row.credential_key_id
  }
})

const sealedColumns = (sealed: Sealed) => ({
  api_key_ciphertext: Buffer.from(sealed.ciphertext),
  api_key_nonce: Buffer.from(sealed.nonce),
  api_key_tag: Buffer.from(sealed.tag),
  credential_key_id: sealed.keyId
})

// Any constant shared by every replica: the key of the activation lock.
const ACTIVATION_LOCK = 5_202_511

export class ProfilesRepo extends Context.Service<ProfilesRepo, {
  /** Stores a new, inactive profile; false when the name is taken. */
  insert(profile: NewProfile): Effect.Effect<boolean>
  list: Effect.Effect<ReadonlyArray<ProfileView>>
  /** The active profile, read afresh on every call (no cache: a switch on any replica applies at once). */
  active: Effect.Effect<ProfileRecord | undefined>
  /**
   * In one round trip: whether this host's attempt holds a live lease on the
   * task (the condition of `TasksRepo.checkLease`), and the active profile,
   * read afresh like `active`.
   */
  activeForLease(taskId: string, hostId: string, attempt: number): Effect.Effect<{
    readonly leaseHeld: boolean
    readonly profile: ProfileRecord | undefined
    /** The host's own budget of planner tokens (docs/usage.md); null when it has none. */
    readonly hostDailyTokens: number | null
    /** The decisions the attempt took so far (its next step index); 0 when the lease is not held. */
    readonly steps: number
  }>
  activate(profileId: string): Effect.Effect<ProfileView, ProfileNotFound>
  /** Every profile with its sealed key (for the rotation). */
  allSealed: Effect.Effect<ReadonlyArray<ProfileRecord>>
  /** Replaces the sealed key, only if it is still the one sealed under `previousKeyId`; false otherwise. */
  replaceSealed(profileId: string, previousKeyId: string, sealed: Sealed): Effect.Effect<boolean>
}>()("switchboard/server/planner/ProfilesRepo") {
  static readonly layer = Layer.effect(ProfilesRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql`id, name, provider, model, timeout_ms, base_url, active, credential_key_id, created_at`
    const sealedSelect = sql`SELECT ${columns}, api_key_ciphertext, api_key_nonce, api_key_tag FROM provider_profiles`

    return ProfilesRepo.of({
      insert: Effect.fnUntraced(function*(profile) {
        const rows = yield* sql`
          INSERT INTO provider_profiles ${sql.insert({
          id: profile.profileId,
          name: profile.name,
          provider: profile.provider,
          model: profile.model,
          timeout_ms: profile.timeoutMs,
          base_url: profile.baseUrl,
          ...sealedColumns(profile.sealed)
        })}
          ON CONFLICT (name) DO NOTHING
          RETURNING id`
        return rows.length === 1
      }, Effect.orDie, traced("ProfilesRepo.insert")),

      list: sql<Row>`SELECT ${columns} FROM provider_profiles ORDER BY created_at, id`.pipe(
        Effect.map((rows) => rows.map(toView)),
        Effect.orDie,
        traced("ProfilesRepo.list")
      ),

      active: sql<SealedRow>`${sealedSelect} WHERE active`.pipe(
        Effect.map((rows) => rows[0] === undefined ? undefined : toRecord(rows[0])),
        Effect.orDie,
        traced("ProfilesRepo.active")
      ),

      activeForLease: Effect.fnUntraced(function*(taskId, hostId, attempt) {
        const rows = yield* sql<Partial<SealedRow> & { readonly lease_held: boolean; readonly host_daily_tokens: number | null; readonly steps: number | null }>`
          SELECT lease.held AS lease_held, lease.steps, p.id, p.name, p.provider, p.model, p.timeout_ms, p.base_url,
            p.credential_key_id, p.api_key_ciphertext, p.api_key_nonce, p.api_key_tag,
            (SELECT daily_tokens::float8 FROM hosts WHERE id = ${hostId}) AS host_daily_tokens
          FROM (SELECT count(*) > 0 AS held, max(next_step_index) AS steps FROM tasks
            WHERE id = ${taskId} AND host_id = ${hostId} AND attempt = ${attempt}
              AND status = 'running' AND lease_expires_at > now()
          ) AS lease
          LEFT JOIN provider_profiles p ON p.active`
        const row = rows[0]
        return {
          leaseHeld: row?.lease_held === true,
          profile: row?.id === undefined || row.id === null ? undefined : toRecord(row as SealedRow),
          hostDailyTokens: row?.host_daily_tokens === null || row?.host_daily_tokens === undefined ? null : Number(row.host_daily_tokens),
          steps: Number(row?.steps ?? 0)
        }
      }, Effect.orDie, traced("ProfilesRepo.activeForLease")),

      activate: Effect.fnUntraced(function*(profileId) {
        const rows = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`SELECT pg_advisory_xact_lock(${ACTIVATION_LOCK})`
          const target = yield* sql`SELECT 1 FROM provider_profiles WHERE id = ${profileId}`
          if (target.length === 0) return []
          yield* sql`UPDATE provider_profiles SET active = false, updated_at = now() WHERE active AND id <> ${profileId}`
          return yield* sql<Row>`
            UPDATE provider_profiles SET active = true, updated_at = now() WHERE id = ${profileId}
            RETURNING ${columns}`
        })).pipe(Effect.orDie)
        const row = rows[0]
        if (row === undefined) {
          return yield* new ProfileNotFound({ error: `No provider profile with id "${profileId}"`, profileId })
        }
        return toView(row)
      }, traced("ProfilesRepo.activate")),

      allSealed: sql<SealedRow>`${sealedSelect} ORDER BY created_at, id`.pipe(
        Effect.map((rows) => rows.map(toRecord)),
        Effect.orDie,
        traced("ProfilesRepo.allSealed")
      ),

      replaceSealed: Effect.fnUntraced(function*(profileId, previousKeyId, sealed) {
        const rows = yield* sql`
          UPDATE provider_profiles SET ${sql.update(sealedColumns(sealed))}, updated_at = now()
          WHERE id = ${profileId} AND credential_key_id = ${previousKeyId}
          RETURNING id`
        return rows.length === 1
      }, Effect.orDie, traced("ProfilesRepo.replaceSealed"))
    })
  }))
}
