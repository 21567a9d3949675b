/**
 * At start-up, after the migrations: the provider profiles whose stored key
 * neither `CREDENTIAL_KEY` nor `CREDENTIAL_KEY_PREVIOUS` opens (a restart with
 * another key, a rotation whose previous key was dropped too early), named in
 * one warning — otherwise the operator learns of them only when a host's next
 * decision answers 503 `credential_unavailable`. The server
 * starts all the same: the other profiles, and everything else, still work.
 */
import { Effect, Layer } from "effect"
import { CredentialKeys } from "../secrets/CredentialKeys.ts"
import { ProfilesRepo } from "./ProfilesRepo.ts"

export interface UndecryptableProfile {
  readonly profileId: string
  readonly name: string
  /** The fingerprint of the key that sealed it (not the key): which key to bring back. */
  readonly keyId: string
}

/** Profiles named in the warning; the rest are counted (the log line stays bounded). */
const NAMED = 20

/** Every profile whose key the held keys do not open. */
export const undecryptableProfiles: Effect.Effect<ReadonlyArray<UndecryptableProfile>, never, CredentialKeys | ProfilesRepo> =
  Effect.gen(function*() {
    const keys = yield* CredentialKeys
    const repo = yield* ProfilesRepo
    const found: Array<UndecryptableProfile> = []
    for (const profile of yield* repo.allSealed) {
      const opened = yield* Effect.result(keys.open(profile.profileId, profile.sealed))
      if (opened._tag === "Failure") found.push({ profileId: profile.profileId, name: profile.name, keyId: profile.sealed.keyId })
    }
    return found
  })

/** The warning's text; no key, no credential, only names, ids and key fingerprints. */
export const undecryptableWarning = (profiles: ReadonlyArray<UndecryptableProfile>): string => {
  const named = profiles.slice(0, NAMED).map((p) => `${JSON.stringify(p.name)} (${p.profileId}, sealed under key ${p.keyId})`)
  const more = profiles.length > NAMED ? ` and ${profiles.length - NAMED} more` : ""
  return `${profiles.length} provider profile(s) cannot be decrypted with CREDENTIAL_KEY or CREDENTIAL_KEY_PREVIOUS: ` +
    `${named.join(", ")}${more}. Their planner decisions will answer 503 credential_unavailable until the key that ` +
    "sealed them is set (as CREDENTIAL_KEY, or CREDENTIAL_KEY_PREVIOUS during a rotation) or the profiles are created again"
}

/** The check, run once while the server starts; a failed query is logged, never a reason not to start. */
export const layer = Layer.effectDiscard(
  undecryptableProfiles.pipe(
    Effect.flatMap((profiles) => profiles.length === 0 ? Effect.void : Effect.logWarning(undecryptableWarning(profiles))),
    Effect.catchCause((cause) => Effect.logWarning("provider profiles: the start-up credential check failed", cause))
  )
)
