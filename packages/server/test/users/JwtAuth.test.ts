/**
 * The JWT check on its own (`JwtAuth.ts`): what it takes, what it refuses, and how it keeps working
 * through a product's key rotation and its JWKS endpoint failing.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import type { AuthSettings, JwksTuning } from "../../src/users/JwtAuth.ts"
import { makeVerifier, VerifiedTokens } from "../../src/users/JwtAuth.ts"
import type { SigningKey } from "../support/ProductAuth.ts"
import { audience, issuer, makeKey, signConfused, signToken, signWithSecret, startJwks, unsignedToken } from "../support/ProductAuth.ts"

const settings = (jwksUrl: string): AuthSettings => ({ jwksUrl: new URL(jwksUrl), secret: undefined, issuer, audience })

const userOf = (verified: { readonly _tag: string; readonly userId?: string }) => verified._tag === "User" ? verified.userId : undefined

/** Until `check` holds, for at most `tries` × 50 ms (a cooldown to pass, not a timing to assert). */
const eventually = (check: () => Promise<boolean>, tries = 100) =>
  Effect.promise(async () => {
    for (let i = 0; i < tries; i++) {
      if (await check()) return true
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    return false
  })

describe("JWT verification (jose)", () => {
  it.effect("a product's token names its user; every kind of bad token is refused", () =>
    Effect.gen(function*() {
      const key = yield* Effect.promise(() => makeKey("k1"))
      const ec = yield* Effect.promise(() => makeKey("k2", "ES256"))
      const ed = yield* Effect.promise(() => makeKey("k3", "EdDSA"))
      const foreign = yield* Effect.promise(() => makeKey("k1"))
      const jwks = yield* Effect.promise(() => startJwks([key, ec, ed]))
      yield* Effect.addFinalizer(() => Effect.promise(() => jwks.close()))
      const verify = makeVerifier(settings(jwks.url))
      const check = (token: Promise<string> | string) => Effect.flatMap(Effect.promise(async () => token), verify)

      assert.strictEqual(userOf(yield* check(signToken(key, { sub: "alice" }))), "alice")
      assert.strictEqual(userOf(yield* check(signToken(ec, { sub: "bob" }))), "bob")
      assert.strictEqual(userOf(yield* check(signToken(ed, { sub: "carol" }))), "carol")
      // `aud` may be a list holding ours; 60 s of clock skew either way.
      assert.strictEqual(userOf(yield* check(signToken(key, { aud: ["other", audience] }))), "alice")
      assert.strictEqual(userOf(yield* check(signToken(key, { expiresIn: -30 }))), "alice")
      assert.strictEqual(userOf(yield* check(signToken(key, { notBefore: 30 }))), "alice")

      const refused: Record<string, Promise<string> | string> = {
        garbage: "not.a.jwt",
        empty: "",
        "alg none": unsignedToken(),
        "HS256 with the RSA public key as the secret": signConfused(key),
        "a foreign key under a known kid": signToken(foreign),
        "an unknown kid": signToken(key, {}, "nobody"),
        expired: signToken(key, { expiresIn: -120 }),
        "nbf ahead": signToken(key, { notBefore: 300 }),
        "no exp": signToken(key, { expiresIn: null }),
        "no sub": signToken(key, { sub: "" }),
        "wrong iss": signToken(key, { iss: "https://elsewhere.test" }),
        "wrong aud": signToken(key, { aud: "someone-else" }),
        "a sub too long": signToken(key, { sub: "x".repeat(257) })
      }
      for (const [name, token] of Object.entries(refused)) {
        const verified = yield* check(token)
        assert.strictEqual(verified._tag, "Refused", name)
      }
    }).pipe(Effect.scoped))

  it.effect("HS256 with AUTH_JWT_SECRET: its tokens only, and never an asymmetric algorithm", () =>
    Effect.gen(function*() {
      const secret = "a-secret-of-at-least-thirty-two-bytes!"
      const verify = makeVerifier({ jwksUrl: undefined, secret: Redacted.make(secret), issuer: undefined, audience: undefined })
      const key = yield* Effect.promise(() => makeKey("k1"))
      assert.strictEqual(userOf(yield* Effect.flatMap(Effect.promise(() => signWithSecret(secret, { sub: "dana" })), verify)), "dana")
      assert.strictEqual((yield* Effect.flatMap(Effect.promise(() => signWithSecret(`${secret}x`)), verify))._tag, "Refused")
      assert.strictEqual((yield* Effect.flatMap(Effect.promise(() => signToken(key)), verify))._tag, "Refused")
      assert.strictEqual((yield* verify(unsignedToken()))._tag, "Refused")
    }))

  it.effect("a key added to the JWKS is taken without a restart", () =>
    Effect.gen(function*() {
      const old = yield* Effect.promise(() => makeKey("old"))
      const next = yield* Effect.promise(() => makeKey("next"))
      const jwks = yield* Effect.promise(() => startJwks([old]))
      yield* Effect.addFinalizer(() => Effect.promise(() => jwks.close()))
      const verify = makeVerifier(settings(jwks.url), { cacheMaxAgeMs: 600_000, cooldownMs: 200 })
      assert.strictEqual(userOf(yield* Effect.flatMap(Effect.promise(() => signToken(old)), verify)), "alice")
      const token = yield* Effect.promise(() => signToken(next, { sub: "erin" }))
      assert.strictEqual((yield* verify(token))._tag, "Refused", "not in the JWKS yet")
      jwks.setKeys([old, next])
      const taken = yield* eventually(async () => userOf(await Effect.runPromise(verify(token))) === "erin")
      assert.isTrue(taken, "the new kid was fetched again and taken")
    }).pipe(Effect.scoped))

  it.live("the JWKS endpoint down, erroring or answering garbage: the cached keys keep working, an unknown kid is refused, nothing throws", () =>
    Effect.gen(function*() {
      const key = yield* Effect.promise(() => makeKey("k1"))
      const unknown = yield* Effect.promise(() => makeKey("k9"))
      const jwks = yield* Effect.promise(() => startJwks([key]))
      const tuning: JwksTuning = { cacheMaxAgeMs: 1, cooldownMs: 1 }
      const verify = makeVerifier(settings(jwks.url), tuning)
      const token = yield* Effect.promise(() => signToken(key, { sub: "frank" }))
      const stranger = yield* Effect.promise(() => signToken(unknown))
      assert.strictEqual(userOf(yield* verify(token)), "frank")
      const fetchedBefore = jwks.fetches()
      for (const mode of ["error", "garbage"] as const) {
        jwks.setMode(mode)
        yield* Effect.sleep("5 millis") // past the cache's age: every check asks the endpoint again
        assert.strictEqual(userOf(yield* verify(token)), "frank", mode)
        assert.strictEqual((yield* verify(stranger))._tag, "Refused", mode)
      }
      assert.isAbove(jwks.fetches(), fetchedBefore, "the endpoint was asked again, and failed")
      yield* Effect.promise(() => jwks.close())
      yield* Effect.sleep("5 millis")
      assert.strictEqual(userOf(yield* verify(token)), "frank", "endpoint gone")
      assert.strictEqual((yield* verify(stranger))._tag, "Refused", "endpoint gone")

      // Never fetched at all: refused, not thrown.
      const never = makeVerifier(settings(jwks.url), tuning)
      assert.strictEqual((yield* never(token))._tag, "Refused")
    }))
})

describe("verified tokens remembered (VerifiedTokens)", () => {
  it("least recently used goes first past the bound; an entry ends at its moment", () => {
    const tokens = new VerifiedTokens(2)
    tokens.remember("a", "alice", 1_000)
    tokens.remember("b", "bob", 1_000)
    assert.strictEqual(tokens.lookup("a", 0), "alice") // a is now the most recent
    tokens.remember("c", "carol", 1_000)
    assert.strictEqual(tokens.size, 2)
    assert.strictEqual(tokens.lookup("b", 0), undefined, "b was the least recently used")
    assert.strictEqual(tokens.lookup("a", 0), "alice")
    assert.strictEqual(tokens.lookup("c", 999), "carol")
    assert.strictEqual(tokens.lookup("c", 1_000), undefined, "ended")
    assert.strictEqual(tokens.size, 1, "an ended entry is dropped when met")
  })

  it.live("a token verified once is not verified again until the keys are stale or it expires", () =>
    Effect.gen(function*() {
      const key = yield* Effect.promise(() => makeKey("k1"))
      const jwks = yield* Effect.promise(() => startJwks([key]))
      yield* Effect.addFinalizer(() => Effect.promise(() => jwks.close()))
      let clock = Date.now()
      // Keys stale after 1 ms: every verification that reaches jose fetches the JWKS again.
      const verify = makeVerifier(settings(jwks.url), { cacheMaxAgeMs: 1, cooldownMs: 1 }, () => clock)
      const token = yield* Effect.promise(() => signToken(key, { sub: "gina", expiresIn: 120 }))
      assert.strictEqual(userOf(yield* verify(token)), "gina")
      const fetched = jwks.fetches()
      yield* Effect.sleep("5 millis")
      assert.strictEqual(userOf(yield* verify(token)), "gina")
      assert.strictEqual(jwks.fetches(), fetched, "remembered: no second verification")

      clock += 2 // past the keys' freshness: verified again (and the JWKS fetched again)
      yield* Effect.sleep("5 millis")
      assert.strictEqual(userOf(yield* verify(token)), "gina")
      assert.isAbove(jwks.fetches(), fetched)

      clock += 200_000 // past exp and the 60 s of skew: refused, remembered or not
      assert.strictEqual((yield* verify(token))._tag, "Refused")
    }).pipe(Effect.scoped))
})
