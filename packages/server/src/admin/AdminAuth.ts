/**
 * `ADMIN_TOKEN`: every `/admin` route needs `Authorization: Bearer
 * $ADMIN_TOKEN`. A server without one (unset or blank) refuses everyone with
 * 401: an operator API left open by a forgotten variable would hand out host
 * tokens and provider profiles. Compared in constant time.
 */
import { AdminAuth, Unauthenticated } from "@switchboard/domain"
import { Config, Effect, Layer, Option, Redacted } from "effect"
import { tokenMatches } from "../http/ChatAuth.ts"

export const layer = Layer.effect(AdminAuth, Effect.gen(function*() {
  const configured = yield* Config.option(Config.Redacted("ADMIN_TOKEN")).pipe(Effect.orElseSucceed(() => Option.none()))
  const token = Option.filter(configured, (t) => Redacted.value(t).trim() !== "")
  if (Option.isNone(token)) yield* Effect.logWarning("ADMIN_TOKEN is not set: every /admin route answers 401")
  return AdminAuth.of({
    adminToken: (httpEffect, { credential }) => {
      if (Option.isNone(token)) {
        return Effect.fail(new Unauthenticated({ error: "The admin API is disabled: the server has no ADMIN_TOKEN" }))
      }
      return tokenMatches(Redacted.value(token.value), Redacted.value(credential))
        ? httpEffect
        : Effect.fail(new Unauthenticated({ error: "Missing or invalid bearer token (ADMIN_TOKEN)" }))
    }
  })
}))
