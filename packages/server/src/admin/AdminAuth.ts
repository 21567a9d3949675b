/**
 * `ADMIN_TOKEN`: every `/admin` route needs `Authorization: Bearer
 * $ADMIN_TOKEN`. A server without one (unset or blank) refuses everyone with
 * 401: an operator API left open by a forgotten variable would hand out host
 * tokens and provider profiles. Compared in constant time.
 */
import { AdminAuth, Unauthenticated } from "@switchboard/domain"
import { Config, Effect, Layer, Option, Redacted } from "effect"
import { tokenMatches } from "../http/ChatAuth.ts"
import { setting } from "../process/Setting.ts"

export const AdminTokenSetting = setting({ name: "ADMIN_TOKEN", secret: true, blankIsUnset: true }, (name) =>
  Config.option(Config.Redacted(name)).pipe(Config.map(Option.filter((t) => Redacted.value(t).trim() !== ""))))

export const layer = Layer.effect(AdminAuth, Effect.gen(function*() {
  const token = yield* AdminTokenSetting.config.pipe(Effect.orElseSucceed(() => Option.none()))
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
