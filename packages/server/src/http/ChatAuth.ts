/**
 * `CHAT_TOKEN`: when set, every `/api/*` route needs `Authorization: Bearer
 * $CHAT_TOKEN`. Compared in constant time so response timing leaks nothing
 * about the token.
 */
import { ChatAuth, Unauthenticated } from "@switchboard/domain"
import { Config, Effect, Layer, Option, Redacted } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"

const digest = (s: string) => createHash("sha256").update(s).digest()

export const tokenMatches = (expected: string, given: string) => timingSafeEqual(digest(expected), digest(given))

/** `CHAT_TOKEN`, when set (empty is unset): what every `/api/*` request must carry. */
export const ChatToken = Config.option(Config.Redacted("CHAT_TOKEN")).pipe(
  Config.map((token) => Option.isNone(token) || Redacted.value(token.value) === "" ? undefined : Redacted.value(token.value))
)

export const layer = Layer.effect(ChatAuth, Effect.gen(function*() {
  const token = yield* ChatToken
  return ChatAuth.of({
    bearer: (httpEffect, { credential }) => {
      if (token === undefined) return httpEffect
      return tokenMatches(token, Redacted.value(credential))
        ? httpEffect
        : Effect.fail(new Unauthenticated({ error: "Missing or invalid bearer token (CHAT_TOKEN)" }))
    }
  })
}))
