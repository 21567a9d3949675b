/**
 * A restart with another CREDENTIAL_KEY: the start-up check
 * names each profile that neither CREDENTIAL_KEY nor CREDENTIAL_KEY_PREVIOUS
 * decrypts, in one warning, and the server starts anyway.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Logger, References } from "effect"
import { randomBytes } from "node:crypto"
import * as CredentialCheck from "../../src/planner/CredentialCheck.ts"
import { CredentialKeys, parseKey } from "../../src/secrets/CredentialKeys.ts"
import { ProfilesRepo } from "../../src/planner/ProfilesRepo.ts"
import { ProviderProfiles } from "../../src/planner/ProviderProfiles.ts"
import { TestDatabase } from "../support/TestDatabase.ts"

const newKey = () => randomBytes(32).toString("base64")
const [A, B, C] = [newKey(), newKey(), newKey()]
const keys = (current: string | undefined, previous?: string) =>
  Layer.succeed(CredentialKeys, CredentialKeys.make(
    parseKey("CREDENTIAL_KEY", current),
    previous === undefined ? undefined : parseKey("CREDENTIAL_KEY_PREVIOUS", previous)
  ))

const PROVIDER_KEYS = { alpha: "sk-alpha-plaintext-91c2", beta: "sk-beta-plaintext-4e7d" }

/** Creates a profile as a server holding `key` would. */
const createProfile = (name: keyof typeof PROVIDER_KEYS, key: string) =>
  ProviderProfiles.use((p) =>
    p.create({ name, provider: "openai-compatible", model: "m", timeoutMs: 30_000, apiKey: PROVIDER_KEYS[name] })
  ).pipe(Effect.provide(ProviderProfiles.layer.pipe(Layer.provide(keys(key)))))

/** What the check logs at a start with these keys (built as the server builds it, after the migrations). */
const startWith = (current: string | undefined, previous?: string) =>
  Effect.gen(function*() {
    const lines: Array<{ level: string; message: string }> = []
    const captured = Logger.make(({ logLevel, message }) => {
      lines.push({ level: logLevel, message: (Array.isArray(message) ? message : [message]).map(String).join(" ") })
    })
    yield* Layer.build(CredentialCheck.layer.pipe(Layer.provide(keys(current, previous)))).pipe(
      Effect.scoped,
      Effect.provide(Layer.mergeAll(Logger.layer([captured]), Layer.succeed(References.MinimumLogLevel, "Debug")))
    )
    return lines
  })

describe("credential check at start-up", () => {
  layer(Layer.mergeAll(ProfilesRepo.layer).pipe(Layer.provideMerge(TestDatabase)), { timeout: 120_000 })("profiles", (it) => {
    it.effect("warns, naming each profile no held key decrypts, and only those; silent when every key opens", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* startWith(A), [], "no profile yet: nothing to say")
        const alpha = yield* createProfile("alpha", A)
        const beta = yield* createProfile("beta", B)

        // Both keys held (A current, B previous): nothing to say.
        assert.deepStrictEqual(yield* startWith(A, B), [])

        // Restarted with another key C, A kept as the previous one: beta (sealed under B) is lost.
        const restarted = yield* startWith(C, A)
        assert.strictEqual(restarted.length, 1, JSON.stringify(restarted))
        assert.strictEqual(restarted[0]!.level, "Warn")
        const warning = restarted[0]!.message
        assert.include(warning, `"beta" (${beta}`)
        assert.notInclude(warning, alpha)
        assert.include(warning, "CREDENTIAL_KEY_PREVIOUS")
        for (const secret of [A, B, C, ...Object.values(PROVIDER_KEYS)]) assert.notInclude(warning, secret)

        // Only C: both named.
        const both = (yield* startWith(C))[0]!.message
        assert.include(both, `"alpha" (${alpha}`)
        assert.include(both, `"beta" (${beta}`)
        assert.include(both, "2 provider profile(s)")
      }))
  })
})
