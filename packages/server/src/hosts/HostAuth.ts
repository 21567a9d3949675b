/**
 * The host token check of every host route (and the planner decision): the
 * bearer token must be a registered host's, else 401. Binding the host to the
 * one the request names is the handlers' job (it may sit in the body), and
 * happens before they touch anything else.
 */
import { CurrentHost, HostAuth, Unauthenticated } from "@switchboard/domain"
import { Effect, Layer, Redacted } from "effect"
import { HostsRepo } from "./HostsRepo.ts"

export const layer = Layer.effect(HostAuth, Effect.gen(function*() {
  const hosts = yield* HostsRepo
  return HostAuth.of({
    hostToken: (httpEffect, { credential }) =>
      Effect.gen(function*() {
        const host = yield* hosts.authenticate(Redacted.value(credential))
        if (host === undefined) return yield* new Unauthenticated({ error: "Missing or unknown host token" })
        return yield* Effect.provideService(httpEffect, CurrentHost, CurrentHost.of(host))
      })
  })
}))
