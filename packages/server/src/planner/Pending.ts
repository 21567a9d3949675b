/**
 * INTERIM (removed once the handlers land): the planner, host and admin
 * groups of the domain Api answer 500 until their handlers are implemented,
 * so the API definition can be shared early.
 */
import { Api, CurrentHost, HostAuth, Unauthenticated } from "@switchboard/domain"
import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"

const pending = () => Effect.die(new Error("not implemented yet"))

export const HostAuthPending = Layer.succeed(HostAuth, HostAuth.of({
  bearer: () => Effect.fail(new Unauthenticated({ error: "host tokens are not implemented yet" }))
}))

export const PendingHttp = Layer.mergeAll(
  HttpApiBuilder.group(Api, "hosts", (h) =>
    h.handle("heartbeat", pending).handle("claim", pending).handle("lease", pending).handle("result", pending)),
  HttpApiBuilder.group(Api, "planner", (h) => h.handle("decision", pending)),
  HttpApiBuilder.group(Api, "admin", (h) =>
    h.handle("createHost", pending).handle("listHosts", pending).handle("createTask", pending)
      .handle("listTasks", pending).handle("getTask", pending).handle("createProfile", pending)
      .handle("listProfiles", pending).handle("activateProfile", pending).handle("rotateCredentialKey", pending)
      .handle("listDecisions", pending).handle("pruneDecisions", pending))
)
export type { CurrentHost }
