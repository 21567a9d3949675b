/**
 * Handlers of the operator routes: thin, over the hosts' and the planner's
 * services. Nothing here ever answers a credential: profile views carry the
 * key's fingerprint only, and a host token exists only in `createHost`'s answer.
 */
import { Api, HostNotFound } from "@switchboard/domain"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { HostsRepo } from "../hosts/HostsRepo.ts"
import { TasksRepo } from "../hosts/TasksRepo.ts"
import { DecisionRetention } from "../planner/DecisionRetention.ts"
import { DecisionsRepo } from "../planner/DecisionsRepo.ts"
import { ProfilesRepo } from "../planner/ProfilesRepo.ts"
import { ProviderProfiles } from "../planner/ProviderProfiles.ts"

export const AdminHttp = HttpApiBuilder.group(Api, "admin", Effect.fn(function*(handlers) {
  const hosts = yield* HostsRepo
  const tasks = yield* TasksRepo
  const profilesRepo = yield* ProfilesRepo
  const profiles = yield* ProviderProfiles
  const decisions = yield* DecisionsRepo
  const retention = yield* DecisionRetention

  return handlers.handleAll({
    createHost: ({ payload }) =>
      hosts.create(payload.name).pipe(
        Effect.tap(({ hostId }) => Effect.logInfo(`host ${hostId} (${payload.name}) registered`))
      ),
    listHosts: () => Effect.map(hosts.list, (list) => ({ hosts: list })),
    createTask: Effect.fn(function*({ payload }) {
      const taskId = yield* tasks.create(payload.goal, payload.hostId)
      if (taskId === undefined) {
        const hostId = payload.hostId ?? ""
        return yield* new HostNotFound({ error: `No host with id "${hostId}"`, hostId })
      }
      return { taskId }
    }),
    listTasks: ({ query }) =>
      Effect.map(
        tasks.list({ status: query.status, hostId: query.hostId, limit: query.limit ?? 100 }),
        (list) => ({ tasks: list })
      ),
    getTask: ({ params }) => tasks.get(params.taskId),
    createProfile: ({ payload }) => Effect.map(profiles.create(payload), (profileId) => ({ profileId })),
    listProfiles: () => Effect.map(profilesRepo.list, (list) => ({ profiles: list })),
    activateProfile: ({ params }) =>
      profilesRepo.activate(params.profileId).pipe(
        Effect.tap((p) => Effect.logInfo(`provider profile ${p.profileId} (${p.name}) is now the active one`))
      ),
    rotateCredentialKey: () => profiles.rotate,
    listDecisions: ({ query }) =>
      Effect.map(decisions.list(query.taskId, query.attempt), (list) => ({ decisions: list })),
    pruneDecisions: () => Effect.map(retention.prune, (deleted) => ({ deleted }))
  })
}))
