/**
 * A key rotation over sealed values of any owner (provider profiles, agents'
 * MCP headers): each value not yet under the current key opened with the key
 * that sealed it, sealed again under the current one and written back by a
 * compare-and-set on the old key id, so a rotation running on another replica
 * at the same time is never undone. A value no held key opens is left as it
 * is and named.
 */
import type { CredentialUnavailable } from "@switchboard/domain"
import { Effect } from "effect"
import type { Sealed } from "./CredentialKeys.ts"
import { CredentialKeys } from "./CredentialKeys.ts"

export interface RotationCounts {
  readonly reencrypted: number
  readonly alreadyCurrent: number
  /** The names (`nameOf`) of values under a key that is neither CREDENTIAL_KEY nor CREDENTIAL_KEY_PREVIOUS. */
  readonly undecryptable: ReadonlyArray<string>
}

export const resealAll = <A>(
  values: ReadonlyArray<A>,
  of: {
    readonly sealed: (value: A) => Sealed
    /** The associated data it was sealed with. */
    readonly owner: (value: A) => string
    readonly name: (value: A) => string
    /** Writes `sealed` if the stored value is still under `previousKeyId`; false when it was not. */
    readonly replace: (value: A, sealed: Sealed, previousKeyId: string) => Effect.Effect<boolean>
  }
): Effect.Effect<RotationCounts, CredentialUnavailable, CredentialKeys> =>
  Effect.gen(function*() {
    const keys = yield* CredentialKeys
    const keyId = yield* keys.currentKeyId
    let reencrypted = 0
    let alreadyCurrent = 0
    const undecryptable: Array<string> = []
    for (const value of values) {
      const sealed = of.sealed(value)
      if (sealed.keyId === keyId) {
        alreadyCurrent++
        continue
      }
      const resealed = yield* Effect.result(keys.reseal(of.owner(value), sealed))
      if (resealed._tag === "Failure") {
        undecryptable.push(of.name(value))
        continue
      }
      if (yield* of.replace(value, resealed.success, sealed.keyId)) reencrypted++
      else alreadyCurrent++
    }
    return { reencrypted, alreadyCurrent, undecryptable }
  })
