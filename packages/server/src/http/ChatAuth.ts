/**
 * Who a `/api/*` request acts for (docs/users.md), as `CurrentUser`:
 *
 * - with `AUTH_JWKS_URL` or `AUTH_JWT_SECRET`: the `sub` of the bearer JWT (`JwtAuth.ts`); with
 *   `CHAT_TOKEN` as well, that token is a trusted backend's, acting for the user it names in
 *   `X-Switchboard-User` (required then);
 * - with `CHAT_TOKEN` only: the bearer must be it; the user is `X-Switchboard-User`, else `default`;
 * - with neither: `X-Switchboard-User`, else `default` (one user: the behaviour before users).
 *
 * `CHAT_TOKEN` is compared in constant time so response timing leaks nothing about it.
 */
import { ChatAuth, CurrentUser, DEFAULT_USER, InvalidRequest, Unauthenticated, USER_HEADER } from "@switchboard/domain"
import { Config, Effect, Layer, Option, Redacted } from "effect"
import { HttpServerRequest } from "effect/http"
import { createHash, timingSafeEqual } from "node:crypto"
import { setting } from "../process/Setting.ts"
import { AuthConfig, makeVerifier, usesJwt } from "../users/JwtAuth.ts"

const digest = (s: string) => createHash("sha256").update(s).digest()

export const tokenMatches = (expected: string, given: string) => timingSafeEqual(digest(expected), digest(given))

/** `CHAT_TOKEN`, when set (empty is unset): what every `/api/*` request must carry. */
export const ChatTokenSetting = setting(
  { name: "CHAT_TOKEN", secret: true, blankIsUnset: true },
  (name) =>
    Config.option(Config.Redacted(name)).pipe(
      Config.map((token) => Option.isNone(token) || Redacted.value(token.value) === "" ? undefined : Redacted.value(token.value))
    )
)

const MAX_USER_CHARS = 256

/** `X-Switchboard-User`: the user, absent, or the 400 of a value no user id can be. */
const namedUser = Effect.map(HttpServerRequest.HttpServerRequest, (request): string | undefined | InvalidRequest => {
  const value = request.headers[USER_HEADER]
  if (value === undefined) return undefined
  return value.length >= 1 && value.length <= MAX_USER_CHARS && !value.includes("\u0000")
    ? value
    : new InvalidRequest({ error: `Invalid ${USER_HEADER} header: a user id of 1 to ${MAX_USER_CHARS} characters` })
})

export const layer = Layer.effect(ChatAuth, Effect.gen(function*() {
  const token = yield* ChatTokenSetting.config
  const auth = yield* AuthConfig
  const verify = usesJwt(auth) ? makeVerifier(auth) : undefined
  const refused = (why: string) => new Unauthenticated({ error: `Missing or invalid bearer token (${why})` })
  const what = verify === undefined ? "CHAT_TOKEN" : token === undefined ? "a user's JWT" : "a user's JWT or CHAT_TOKEN"

  return ChatAuth.of({
    bearer: (httpEffect, { credential }) =>
      Effect.gen(function*() {
        const given = Redacted.value(credential)
        const named = yield* namedUser
        if (named instanceof InvalidRequest) return yield* named
        let userId: string
        let vouched = true
        if (token !== undefined && given !== "" && tokenMatches(token, given)) {
          // A trusted backend: with users signed in by JWT it must say whose request this is.
          if (verify !== undefined && named === undefined) {
            return yield* new InvalidRequest({ error: `Missing ${USER_HEADER} header: CHAT_TOKEN acts for the user it names` })
          }
          userId = named ?? DEFAULT_USER
          vouched = named !== undefined
        } else if (verify !== undefined) {
          if (given === "") return yield* refused(what)
          const verified = yield* verify(given)
          if (verified._tag === "Refused") {
            yield* Effect.logDebug("a bearer JWT was refused").pipe(Effect.annotateLogs({ reason: verified.reason }))
            return yield* refused(what)
          }
          userId = verified.userId
        } else if (token !== undefined) {
          return yield* refused(what)
        } else {
          userId = named ?? DEFAULT_USER
          vouched = false
        }
        return yield* Effect.provideService(httpEffect, CurrentUser, CurrentUser.of({ userId, vouched }))
      })
  })
}))
