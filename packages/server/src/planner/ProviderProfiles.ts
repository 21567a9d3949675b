/**
 * Provider profiles as the operator manages them: created with the API key
 * sealed under the current credential key, listed without it, activated, and
 * re-sealed under the current key after a rotation. The plaintext key exists
 * only in the create request and, briefly, in the planner's provider call.
 */
import { ProfileNameTaken } from "@switchboard/domain"
import type { CreateProfileRequest, CredentialUnavailable, RotationReport } from "@switchboard/domain"
import { Context, Effect, Layer, Redacted } from "effect"
import { newId } from "../hosts/HostsRepo.ts"
import { CredentialKeys } from "../secrets/CredentialKeys.ts"
import { resealAll } from "../secrets/Rotation.ts"
import { defaultBaseUrl } from "@switchboard/providers"
import { ProfilesRepo } from "./ProfilesRepo.ts"

export class ProviderProfiles extends Context.Service<ProviderProfiles, {
  create(request: CreateProfileRequest): Effect.Effect<string, CredentialUnavailable | ProfileNameTaken>
  readonly rotate: Effect.Effect<RotationReport, CredentialUnavailable>
}>()("switchboard/server/planner/ProviderProfiles") {
  static readonly layer = Layer.effect(ProviderProfiles, Effect.gen(function*() {
    const keys = yield* CredentialKeys
    const repo = yield* ProfilesRepo
    return ProviderProfiles.of({
      create: Effect.fn("ProviderProfiles.create")(function*(request) {
        const profileId = newId("prof")
        // The profile id is the associated data: it must exist before sealing.
        const sealed = yield* keys.seal(profileId, Redacted.make(request.apiKey))
        const inserted = yield* repo.insert({
          profileId,
          name: request.name,
          provider: request.provider,
          model: request.model,
          timeoutMs: request.timeoutMs,
          baseUrl: (request.baseUrl ?? defaultBaseUrl(request.provider)).replace(/\/+$/, ""),
          sealed
        })
        if (!inserted) {
          return yield* new ProfileNameTaken({ error: `A provider profile named "${request.name}" exists`, name: request.name })
        }
        yield* Effect.logInfo(`provider profile ${profileId} (${request.name}) created under key ${sealed.keyId}`)
        return profileId
      }),
      rotate: Effect.gen(function*() {
        const keyId = yield* keys.currentKeyId
        const { alreadyCurrent, reencrypted, undecryptable } = yield* resealAll(yield* repo.allSealed, {
          sealed: (profile) => profile.sealed,
          owner: (profile) => profile.profileId,
          name: (profile) => profile.profileId,
          replace: (profile, sealed, previousKeyId) => repo.replaceSealed(profile.profileId, previousKeyId, sealed)
        }).pipe(Effect.provideService(CredentialKeys, keys))
        yield* Effect.logInfo(
          `credential key rotation to ${keyId}: ${reencrypted} re-encrypted, ${alreadyCurrent} already current, ${undecryptable.length} undecryptable`
        )
        return { keyId, reencrypted, alreadyCurrent, undecryptable }
      }).pipe(Effect.withSpan("ProviderProfiles.rotate"))
    })
  }))
}
