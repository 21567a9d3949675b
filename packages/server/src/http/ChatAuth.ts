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

export const layer = Layer.effect(ChatAuth, Effect.gen(function*() {
  const token = yield* Config.option(Config.Redacted("CHAT_TOKEN"))
  return ChatAuth.of({
    bearer: (httpEffect, { credential }) => {
      if (Option.isNone(token) || Redacted.value(token.value) === "") return httpEffect
      return tokenMatches(Redacted.value(token.value), Redacted.value(credential))
        ? httpEffect
        : Effect.fail(new Unauthenticated({ error: "Missing or invalid bearer token (CHAT_TOKEN)" }))
    }
  })
}))
