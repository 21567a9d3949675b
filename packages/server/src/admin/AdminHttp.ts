/**
 * Handlers of the operator routes: thin, over the hosts', the chats' and the
 * planner's services. Nothing here ever answers a credential: profile views
 * carry the key's fingerprint only, and a host token exists only in the
 * answers of `createHost` and `rotateHostToken`.
 */
import { Api, ChatNotFound, DECISIONS_PAGE_MAX, DEFAULT_USER, HostRevoked } from "@switchboard/domain"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AgentsRepo } from "../agents/AgentsRepo.ts"
import { rotateHeaders } from "../agents/McpHeaders.ts"
import { ChatRepo } from "../chat/ChatRepo.ts"
import { hostNotFound, HostsRepo } from "../hosts/HostsRepo.ts"
import { TasksRepo } from "../hosts/TasksRepo.ts"
import { DecisionRetention } from "../planner/DecisionRetention.ts"
import { DecisionsRepo } from "../planner/DecisionsRepo.ts"
import { ProfilesRepo } from "../planner/ProfilesRepo.ts"
import { ProviderProfiles } from "../planner/ProviderProfiles.ts"
import { CredentialKeys } from "../secrets/CredentialKeys.ts"
import { HostBudgets } from "../usage/HostBudgets.ts"
import { UsageReports } from "../usage/UsageReports.ts"
import { chatKey } from "../users/ChatKey.ts"

export const AdminHttp = HttpApiBuilder.group(Api, "admin", Effect.fn(function*(handlers) {
  const hosts = yield* HostsRepo
  const tasks = yield* TasksRepo
  const profilesRepo = yield* ProfilesRepo
  const profiles = yield* ProviderProfiles
  const decisions = yield* DecisionsRepo
  const retention = yield* DecisionRetention
  const chats = yield* ChatRepo
  const usage = yield* UsageReports
  const budgets = yield* HostBudgets
  // The agents' MCP headers are sealed under the same key as the profiles: one rotation re-seals both.
  const rotateMcpHeaders = rotateHeaders.pipe(
    Effect.provideService(CredentialKeys, yield* CredentialKeys),
    Effect.provideService(AgentsRepo, yield* AgentsRepo)
  )


  return handlers.handleAll({
    createHost: ({ payload }) =>
      hosts.create(payload.name).pipe(
        Effect.tap(({ hostId }) => Effect.logInfo(`host ${hostId} (${payload.name}) registered`))
      ),
    listHosts: () => Effect.map(hosts.list, (list) => ({ hosts: list })),
    revokeHost: Effect.fn(function*({ params }) {
      const revocation = yield* hosts.revoke(params.hostId)
      if (revocation === undefined) return yield* hostNotFound(params.hostId)
      const { failed, host, requeued } = revocation
      const tasks = (ids: ReadonlyArray<string>, what: string) =>
        ids.length === 0 ? "" : `; its running task${ids.length === 1 ? "" : "s"} ${what}: ${ids.join(", ")}`
      yield* Effect.logInfo(
        `host ${host.hostId} (${host.name}) revoked` + tasks(requeued, "re-queued") +
          tasks(failed, "failed (their last attempt, TASK_MAX_ATTEMPTS)")
      )
      return host
    }),
    rotateHostToken: Effect.fn(function*({ params }) {
      const rotated = yield* hosts.rotateToken(params.hostId)
      if (rotated === undefined) return yield* hostNotFound(params.hostId)
      if (rotated === "revoked") {
        return yield* new HostRevoked({
          error: `Host ${params.hostId} is revoked: its token cannot be rotated (register a new host)`,
          hostId: params.hostId
        })
      }
      yield* Effect.logInfo(`host ${params.hostId}: token rotated, the previous one is refused from now on`)
      return rotated
    }),
    createTask: Effect.fn(function*({ payload }) {
      const taskId = yield* tasks.create(payload.goal, payload.hostId)
      const hostId = payload.hostId ?? ""
      if (taskId === undefined) return yield* hostNotFound(hostId)
      if (taskId === "revoked") {
        return yield* new HostRevoked({ error: `Host ${hostId} is revoked: no task can be reserved for it`, hostId })
      }
      return { taskId }
    }),
    listTasks: ({ query }) =>
      Effect.map(
        tasks.list({ status: query.status, hostId: query.hostId, limit: query.limit ?? 100 }),
        (list) => ({ tasks: list })
      ),
    getTask: ({ params }) => tasks.get(params.taskId),
    cancelTask: ({ params }) =>
      tasks.cancel(params.taskId).pipe(
        Effect.tap((task) => Effect.logInfo(`task ${task.taskId} cancelled (attempt ${task.attempt})`))
      ),
    listChats: ({ query }) => chats.list(query.user, query.limit ?? 50, query.before),
    deleteChat: Effect.fn(function*({ params, query }) {
      const key = chatKey(query.user ?? DEFAULT_USER, params.chatId)
      const deleted = yield* chats.remove(key)
      if (!deleted) return yield* new ChatNotFound({ error: `No chat with id "${params.chatId}"`, chatId: params.chatId })
      yield* Effect.logInfo(`chat ${key} deleted, with its transcript, jobs and markers`)
    }),
    createProfile: ({ payload }) => Effect.map(profiles.create(payload), (profileId) => ({ profileId })),
    listProfiles: () => Effect.map(profilesRepo.list, (list) => ({ profiles: list })),
    activateProfile: ({ params }) =>
      profilesRepo.activate(params.profileId).pipe(
        Effect.tap((p) => Effect.logInfo(`provider profile ${p.profileId} (${p.name}) is now the active one`))
      ),
    rotateCredentialKey: () =>
      Effect.gen(function*() {
        const report = yield* profiles.rotate
        const mcpHeaders = yield* rotateMcpHeaders
        if (mcpHeaders.reencrypted + mcpHeaders.undecryptable.length > 0) {
          yield* Effect.logInfo(
            `credential key rotation to ${report.keyId}: MCP headers ${mcpHeaders.reencrypted} re-encrypted, ` +
              `${mcpHeaders.alreadyCurrent} already current, ${mcpHeaders.undecryptable.length} undecryptable`
          )
        }
        return { ...report, mcpHeaders }
      }),
    listDecisions: ({ query }) =>
      decisions.list(query.taskId, query.attempt, { limit: query.limit ?? DECISIONS_PAGE_MAX, after: query.after }),
    pruneDecisions: () =>
      Effect.map(Effect.all([retention.prune, retention.pruneUsage]), ([deleted, usageRows]) => ({ deleted, usageRows })),
    usage: ({ query }) => usage.report(query),
    hostBudget: ({ params }) => budgets.view(params.hostId),
    setHostBudget: ({ params, payload }) =>
      budgets.set(params.hostId, payload.dailyTokens).pipe(
        Effect.tap((budget) =>
          Effect.logInfo(`host ${params.hostId}: budget ${budget.dailyTokens === null ? "the default" : `${budget.dailyTokens} tokens`} a day`)
        )
      )
  })
}))
