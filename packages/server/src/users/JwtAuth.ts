/**
 * A user's JWT, verified with `jose` (docs/users.md): signed by a key of the product's JWKS
 * (`AUTH_JWKS_URL`: RS256, ES256 or EdDSA, found by `kid`) or with its HS256 secret
 * (`AUTH_JWT_SECRET`); `exp` required, 60 s of clock skew; `iss` / `aud` when configured. The user
 * is the token's `sub`.
 *
 * The JWKS is cached by `jose` and fetched again for a `kid` it lacks (a product rotating its keys
 * needs no restart here). A failed fetch (endpoint down, 5xx, garbage) is never the caller's 5xx:
 * the keys fetched last keep verifying, and a token no cached key signed is a 401.
 *
 * A token verified once is remembered (`VerifiedTokens`) until its `exp` or for as long as the
 * JWKS is cached, whichever comes first: a signature check costs ~100 µs of CPU and a browser
 * sends the same token with every turn. Refusals are never remembered.
 */
import { Config, Effect, Option, Redacted } from "effect"
import type { JWTVerifyGetKey, JWTVerifyOptions } from "jose"
import { createLocalJWKSet, createRemoteJWKSet, errors, jwtVerify } from "jose"
import { httpUrl } from "../process/Accepts.ts"
import { optionalText, setting } from "../process/Setting.ts"

/** The algorithms a JWKS key may sign with: asymmetric only, so a public key is never taken as a secret. */
export const JWKS_ALGORITHMS = ["RS256", "ES256", "EdDSA"]
export const SECRET_ALGORITHMS = ["HS256"]
/** The least an HS256 secret may hold: RFC 7518 wants a key as long as the hash. */
export const MIN_SECRET_BYTES = 32
const CLOCK_SKEW_SECONDS = 60
const MAX_SUB_CHARS = 256

export interface AuthSettings {
  readonly jwksUrl: URL | undefined
  readonly secret: Redacted.Redacted<string> | undefined
  readonly issuer: string | undefined
  readonly audience: string | undefined
}

export const AuthJwksUrlSetting = setting({
  name: "AUTH_JWKS_URL",
  expected: "an http(s) URL of the product's JSON Web Key Set (not with AUTH_JWT_SECRET)",
  accepts: (value, env) => httpUrl(value) && (env.AUTH_JWT_SECRET ?? "").trim() === "",
  blankIsUnset: true
}, (name) => optionalText(name).pipe(Config.map((url) => url === undefined ? undefined : new URL(url))))

export const AuthJwtSecretSetting = setting({
  name: "AUTH_JWT_SECRET",
  expected: `an HS256 secret of at least ${MIN_SECRET_BYTES} bytes`,
  accepts: (value) => Buffer.byteLength(value, "utf8") >= MIN_SECRET_BYTES,
  blankIsUnset: true,
  secret: true
}, (name) =>
  Config.option(Config.Redacted(name)).pipe(
    Config.map((secret) => Option.isSome(secret) && Redacted.value(secret.value) !== "" ? secret.value : undefined)
  ))

export const AuthIssuerSetting = setting({ name: "AUTH_ISSUER", blankIsUnset: true }, optionalText)

export const AuthAudienceSetting = setting({ name: "AUTH_AUDIENCE", blankIsUnset: true }, optionalText)

export const AuthConfig: Config.Config<AuthSettings> = Config.all({
  jwksUrl: AuthJwksUrlSetting.config,
  secret: AuthJwtSecretSetting.config,
  issuer: AuthIssuerSetting.config,
  audience: AuthAudienceSetting.config
})

/** Whether users are signed in by JWT at all. */
export const usesJwt = (settings: AuthSettings): boolean => settings.jwksUrl !== undefined || settings.secret !== undefined

/** What `verify` answers: the user, or why the token is refused (for the 401's log line, never the token). */
export type Verified = { readonly _tag: "User"; readonly userId: string } | { readonly _tag: "Refused"; readonly reason: string }

const refused = (reason: string): Verified => ({ _tag: "Refused", reason })

/** What is wrong with the token itself; anything else is the JWKS fetch failing (network, status, body). */
const tokenFaults = [
  errors.JWTExpired,
  errors.JWTClaimValidationFailed,
  errors.JWTInvalid,
  errors.JWSInvalid,
  errors.JWSSignatureVerificationFailed,
  errors.JOSEAlgNotAllowed,
  errors.JOSENotSupported,
  errors.JWKSNoMatchingKey,
  errors.JWKSMultipleMatchingKeys
]
const isFetchFailure = (error: unknown) => !tokenFaults.some((fault) => error instanceof fault)

/**
 * How long fetched keys count as fresh (then fetched again, the old ones kept if that fails), and the
 * least time between two fetches for unknown `kid`s (a flood of made-up `kid`s costs one fetch per
 * cooldown, not one per request).
 */
export interface JwksTuning {
  readonly cacheMaxAgeMs: number
  readonly cooldownMs: number
}

export const defaultJwksTuning: JwksTuning = { cacheMaxAgeMs: 10 * 60_000, cooldownMs: 5_000 }

/** How many verified tokens are remembered at once; past it the least recently used is dropped. */
export const VERIFIED_TOKENS_MAX = 10_000

/**
 * Tokens already verified, with their user and the moment they stop counting. A `Map` keeps
 * insertion order, so moving a hit to the end and dropping the first key is a least-recently-used
 * cache bounded by `max`.
 */
export class VerifiedTokens {
  private readonly entries = new Map<string, { readonly userId: string; readonly until: number }>()
  private readonly max: number
  constructor(max: number = VERIFIED_TOKENS_MAX) {
    this.max = max
  }

  get size(): number {
    return this.entries.size
  }

  lookup(token: string, now: number): string | undefined {
    const entry = this.entries.get(token)
    if (entry === undefined) return undefined
    this.entries.delete(token)
    if (entry.until <= now) return undefined
    this.entries.set(token, entry)
    return entry.userId
  }

  remember(token: string, userId: string, until: number): void {
    this.entries.delete(token)
    this.entries.set(token, { userId, until })
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!)
  }
}

export const makeVerifier = (
  settings: AuthSettings,
  tuning: JwksTuning = defaultJwksTuning,
  now: () => number = Date.now
): (token: string) => Effect.Effect<Verified> => {
  const options: JWTVerifyOptions = {
    algorithms: settings.jwksUrl !== undefined ? JWKS_ALGORITHMS : SECRET_ALGORITHMS,
    clockTolerance: CLOCK_SKEW_SECONDS,
    requiredClaims: ["exp", "sub", ...(settings.issuer === undefined ? [] : ["iss"]), ...(settings.audience === undefined ? [] : ["aud"])],
    ...(settings.issuer === undefined ? {} : { issuer: settings.issuer }),
    ...(settings.audience === undefined ? {} : { audience: settings.audience })
  }
  const remote = settings.jwksUrl === undefined ? undefined : createRemoteJWKSet(settings.jwksUrl, {
      timeoutDuration: 5_000,
      cacheMaxAge: tuning.cacheMaxAgeMs,
      cooldownDuration: tuning.cooldownMs
    })
  const secret = settings.secret === undefined ? undefined : new TextEncoder().encode(Redacted.value(settings.secret))
  const verified = new VerifiedTokens()

  // `exp` and `nbf` against the same clock the cache reads.
  const verifyWith = (key: JWTVerifyGetKey | Uint8Array, token: string) => {
    const at = { ...options, currentDate: new Date(now()) }
    return key instanceof Uint8Array ? jwtVerify(token, key, at) : jwtVerify(token, key, at)
  }

  const attempt = async (token: string): Promise<Verified> => {
    let payload
    try {
      payload = (await verifyWith(remote ?? secret!, token)).payload
    } catch (error) {
      if (remote === undefined || !isFetchFailure(error)) return refused(reasonOf(error))
      // The JWKS endpoint failed: the keys it gave last still verify (an unknown `kid` is then a 401).
      const cached = remote.jwks()
      if (cached === undefined) return refused("the JWKS could not be fetched")
      try {
        payload = (await verifyWith(createLocalJWKSet(cached), token)).payload
      } catch (again) {
        return refused(reasonOf(again))
      }
    }
    const sub = payload.sub
    if (typeof sub !== "string" || sub.length === 0 || sub.length > MAX_SUB_CHARS || sub.includes("\u0000")) {
      return refused(`"sub" must be 1 to ${MAX_SUB_CHARS} characters`)
    }
    // Not past `exp` (without the skew jose allows), nor past the keys' own freshness: a key the
    // product withdrew stops verifying its tokens here no later than jose would stop trusting it.
    const until = Math.min(payload.exp! * 1000, now() + tuning.cacheMaxAgeMs)
    verified.remember(token, sub, until)
    return { _tag: "User", userId: sub }
  }

  return (token) =>
    Effect.suspend(() => {
      const known = verified.lookup(token, now())
      return known !== undefined
        ? Effect.succeed<Verified>({ _tag: "User", userId: known })
        : Effect.promise(() => attempt(token).catch((error) => refused(reasonOf(error))))
    })
}

const reasonOf = (error: unknown): string =>
  error instanceof errors.JOSEError ? `${error.code}: ${error.message}` : "the token could not be verified"
