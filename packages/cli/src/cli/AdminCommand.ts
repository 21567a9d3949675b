/**
 * `switchboard admin …`: the operator's side of the planner proxy, over every
 * `/admin` route (docs/planner.md): hosts (add, list, revoke, rotate-token),
 * tasks (add, show, list, cancel), chats (delete), provider profiles, the
 * decision log, its retention sweep and the credential-key rotation, token
 * usage and hosts' budgets (docs/usage.md); the agents (docs/agents.md:
 * apply a file of agents, list them); and the sub-agent kinds
 * (docs/subagents.md: apply a directory of kinds, list them, delete one).
 *
 * `--server` and `--token` (else `ADMIN_TOKEN`) go before or after the
 * subcommand. Output is for people by default (one line per item), `--json`
 * prints the server's answer as it is. `hosts add` prints two `export` lines
 * so that `eval "$(switchboard admin hosts add NAME)"` hands the new host's id
 * and token (shown once) to a following `switchboard host run`; `hosts
 * rotate-token` prints the same two lines for the new token. A provider's
 * API key is never printed, and is best given through the environment
 * (`SWITCHBOARD_PROFILE_API_KEY`) rather than on the command line, where
 * other users can see it in the process list.
 *
 * What every subcommand shares is in `AdminClient.ts`; `chats`, `usage`, `agents` and `subagents` have modules of their own.
 */
import { allPages } from "@switchboard/client"
import { ProviderKind, TaskStatus } from "@switchboard/domain"
import type { HostBudget, HostView, ProfileView, TaskView } from "@switchboard/domain"
import { Config, Console, Effect, Option, Redacted } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { agentsGroup } from "./AdminAgents.ts"
import { chats } from "./AdminChats.ts"
import { adminRoot, fail, hostIdFlag, jsonFlag, orDash, printJson, withAdmin } from "./AdminClient.ts"
import { subagentsGroup } from "./AdminSubagents.ts"
import { usage } from "./AdminUsage.ts"
import { CliFailure } from "./CliFailure.ts"

// ---------------------------------------------------------------------------
// hosts

const hostLine = (host: HostView) =>
  `${host.hostId}  ${host.name}  created ${host.createdAt}  last heartbeat ${orDash(host.lastHeartbeatAt)}` +
  (host.revokedAt === null ? "" : `  revoked ${host.revokedAt}`)

const hostIdArgument = (description: string) => Argument.String("hostId").pipe(Argument.withDescription(description))

const hostsAdd = Command.make("add", {
  name: Argument.String("name").pipe(Argument.withDescription("A name for the host (e.g. the machine's)")),
  json: jsonFlag
}, ({ json, name }) =>
  withAdmin((client) =>
    Effect.gen(function*() {
      const created = yield* client.admin.createHost({ payload: { name } })
      if (json) return yield* printJson(created)
      yield* Console.log(`export SWITCHBOARD_HOST_ID=${created.hostId}`)
      yield* Console.log(`export SWITCHBOARD_HOST_TOKEN=${created.token}`)
      yield* Console.error("The host token is shown only this once: keep it (the server stores only its hash).")
    })
  )).pipe(
    Command.withDescription(
      "Register a host. Prints `export SWITCHBOARD_HOST_ID=…` and `export SWITCHBOARD_HOST_TOKEN=…` " +
        "(the token is shown only once), for `eval \"$(switchboard admin hosts add NAME)\"`."
    )
  )

const hostsList = Command.make("list", { json: jsonFlag }, ({ json }) =>
  withAdmin((client) =>
    Effect.gen(function*() {
      const { hosts } = yield* client.admin.listHosts()
      if (json) return yield* printJson({ hosts })
      if (hosts.length === 0) return yield* Console.log("no hosts")
      for (const host of hosts) yield* Console.log(hostLine(host))
    })
  )).pipe(Command.withDescription("The registered hosts with their last heartbeat (never a token)."))

const hostsRevoke = Command.make("revoke", {
  hostId: hostIdArgument("The host to revoke"),
  json: jsonFlag
}, ({ hostId, json }) =>
  withAdmin((client) =>
    Effect.gen(function*() {
      const host = yield* client.admin.revokeHost({ params: { hostId } })
      yield* json ? printJson(host) : Console.log(`revoked: ${host.hostId} (${host.name}) at ${orDash(host.revokedAt)}`)
    })
  )).pipe(
    Command.withDescription(
      "Revoke a host: its token is refused from now on (every replica); its running task goes back to the queue " +
        "for any host, as the next attempt. The host stays listed, with its revocation time."
    )
  )

const hostsRotateToken = Command.make("rotate-token", {
  hostId: hostIdArgument("The host whose token to replace"),
  json: jsonFlag
}, ({ hostId, json }) =>
  withAdmin((client) =>
    Effect.gen(function*() {
      const rotated = yield* client.admin.rotateHostToken({ params: { hostId } })
      if (json) return yield* printJson(rotated)
      yield* Console.log(`export SWITCHBOARD_HOST_ID=${rotated.hostId}`)
      yield* Console.log(`export SWITCHBOARD_HOST_TOKEN=${rotated.token}`)
      yield* Console.error("The new host token is shown only this once; the previous one is refused from now on.")
    })
  )).pipe(
    Command.withDescription(
      "Issue a new token for a host (shown once, printed as two `export` lines); the old one stops working at once."
    )
  )

const budgetLine = (budget: HostBudget) =>
  `${budget.hostId}  budget ${budget.effectiveDailyTokens === null ? "none" : `${budget.effectiveDailyTokens} tokens a day`}` +
  (budget.dailyTokens === null && budget.effectiveDailyTokens !== null ? " (the default)" : "") +
  `  used ${budget.usedTokens} over the last 24 hours`

const hostsBudget = Command.make("budget", {
  hostId: hostIdArgument("The host whose budget of planner tokens to show or set"),
  dailyTokens: Flag.Int("daily-tokens").pipe(
    Flag.withDescription("Set the host's own budget: planner tokens (input + output) per 24 hours"),
    Flag.optional
  ),
  useDefault: Flag.Boolean("default").pipe(
    Flag.withDescription("Clear the host's own budget: PLANNER_HOST_DAILY_TOKENS applies (unset: none)"),
    Flag.withDefault(false)
  ),
  json: jsonFlag
}, ({ dailyTokens, hostId, json, useDefault }) =>
  withAdmin((client) =>
    Effect.gen(function*() {
      if (useDefault && Option.isSome(dailyTokens)) return yield* fail("give --daily-tokens or --default, not both")
      const budget = useDefault || Option.isSome(dailyTokens)
        ? yield* client.admin.setHostBudget({
          params: { hostId },
          payload: { dailyTokens: Option.getOrNull(dailyTokens) }
        })
        : yield* client.admin.hostBudget({ params: { hostId } })
      yield* json ? printJson(budget) : Console.log(budgetLine(budget))
    })
  )).pipe(
    Command.withDescription(
      "A host's budget of planner tokens per 24 hours and what it used; --daily-tokens N sets its own, --default " +
        "clears it. A host at its budget gets 429 budget_exceeded from the planner proxy, on every replica."
    )
  )

const hosts = Command.make("hosts").pipe(
  Command.withDescription("Register, list, revoke host agents, rotate their tokens, set their budgets."),
  Command.withSubcommands([hostsAdd, hostsList, hostsRevoke, hostsRotateToken, hostsBudget])
)

// ---------------------------------------------------------------------------
// tasks

const taskLine = (task: TaskView) =>
  `${task.taskId}  ${task.status}  attempt ${task.attempt}  host ${orDash(task.hostId)}  ${task.goal}`

const taskDetails = (task: TaskView): ReadonlyArray<string> => [
  `task:      ${task.taskId}`,
  `status:    ${task.status}`,
  `attempt:   ${task.attempt}`,
  `host:      ${orDash(task.hostId)}`,
  `goal:      ${task.goal}`,
  `created:   ${task.createdAt}`,
  ...(task.leaseExpiresAt === undefined ? [] : [`lease:     until ${task.leaseExpiresAt}`]),
  ...(task.terminalAt === undefined ? [] : [`terminal:  ${task.terminalAt}`]),
  ...(task.output === undefined ? [] : [`output:    ${typeof task.output === "string" ? task.output : JSON.stringify(task.output)}`])
]

const tasksAdd = Command.make("add", {
  goal: Argument.String("goal").pipe(Argument.withDescription("What the host agent should achieve")),
  hostId: hostIdFlag("Only this host may claim it (default: any host, oldest task first)"),
  json: jsonFlag
}, ({ goal, hostId, json }) =>
  withAdmin((client) =>
    Effect.gen(function*() {
      const created = yield* client.admin.createTask({
        payload: { goal, ...(Option.isSome(hostId) ? { hostId: hostId.value } : {}) }
      })
      yield* json ? printJson(created) : Console.log(created.taskId)
    })
  )).pipe(Command.withDescription("Queue a task; prints its id."))

const tasksShow = Command.make("show", {
  taskId: Argument.String("taskId").pipe(Argument.withDescription("The task's id")),
  json: jsonFlag
}, ({ json, taskId }) =>
  withAdmin((client) =>
    Effect.gen(function*() {
      const task = yield* client.admin.getTask({ params: { taskId } })
      if (json) return yield* printJson(task)
      for (const line of taskDetails(task)) yield* Console.log(line)
    })
  )).pipe(Command.withDescription("One task: status, attempt, host, output once terminal."))

const tasksList = Command.make("list", {
  status: Flag.Literals("status", TaskStatus.literals).pipe(Flag.withDescription("Only tasks in this status"), Flag.optional),
  hostId: hostIdFlag("Only this host's tasks"),
  json: jsonFlag
}, ({ hostId, json, status }) =>
  withAdmin((client) =>
    Effect.gen(function*() {
      const { tasks } = yield* client.admin.listTasks({
        query: {
          ...(Option.isSome(status) ? { status: status.value } : {}),
          ...(Option.isSome(hostId) ? { hostId: hostId.value } : {})
        }
      })
      if (json) return yield* printJson({ tasks })
      if (tasks.length === 0) return yield* Console.log("no tasks")
      for (const task of tasks) yield* Console.log(taskLine(task))
    })
  )).pipe(Command.withDescription("Tasks, newest first, optionally by status and host."))

const tasksCancel = Command.make("cancel", {
  taskId: Argument.String("taskId").pipe(Argument.withDescription("The task to cancel")),
  json: jsonFlag
}, ({ json, taskId }) =>
  withAdmin((client) =>
    Effect.gen(function*() {
      const task = yield* client.admin.cancelTask({ params: { taskId } })
      yield* json ? printJson(task) : Console.log(`cancelled: ${task.taskId} (attempt ${task.attempt})`)
    })
  )).pipe(
    Command.withDescription(
      "Cancel a queued or running task: it ends as `cancelled`, and the host running it stops at its next call."
    )
  )

const tasks = Command.make("tasks").pipe(
  Command.withDescription("Queue tasks, follow them, cancel them."),
  Command.withSubcommands([tasksAdd, tasksShow, tasksList, tasksCancel])
)

// ---------------------------------------------------------------------------
// provider profiles

const profileLine = (profile: ProfileView) =>
  `${profile.active ? "*" : " "} ${profile.profileId}  ${profile.name}  ${profile.provider}  ${profile.model}  ` +
  `${profile.baseUrl}  timeout ${profile.timeoutMs} ms`

const profilesAdd = Command.make("add", {
  name: Flag.String("name").pipe(Flag.withDescription("A unique name for the profile")),
  provider: Flag.Literals("provider", ProviderKind.literals).pipe(Flag.withDescription("The provider's API")),
  model: Flag.String("model").pipe(Flag.withDescription("The model the planner asks")),
  timeoutMs: Flag.Int("timeout-ms").pipe(Flag.withDescription("Deadline of one decision's provider call"), Flag.withDefault(60_000)),
  baseUrl: Flag.String("base-url").pipe(
    Flag.withDescription("API base URL including /v1 (default: the provider's public API)"),
    Flag.withMetavar("URL"),
    Flag.optional
  ),
  apiKey: Flag.Redacted("api-key").pipe(
    Flag.withDescription("The provider API key, stored encrypted (prefer env SWITCHBOARD_PROFILE_API_KEY)"),
    Flag.withMetavar("KEY"),
    Flag.withFallbackConfig(Config.Redacted("SWITCHBOARD_PROFILE_API_KEY"))
  ),
  activate: Flag.Boolean("activate").pipe(Flag.withDescription("Make it the active profile right away"), Flag.withDefault(false)),
  json: jsonFlag
}, ({ activate, apiKey, baseUrl, json, model, name, provider, timeoutMs }) =>
  withAdmin((client) =>
    Effect.gen(function*() {
      const created = yield* client.admin.createProfile({
        payload: {
          name,
          provider,
          model,
          timeoutMs,
          apiKey: Redacted.value(apiKey),
          ...(Option.isSome(baseUrl) ? { baseUrl: baseUrl.value } : {})
        }
      })
      const active = activate ? yield* client.admin.activateProfile({ params: { profileId: created.profileId } }) : undefined
      if (json) return yield* printJson(active === undefined ? created : { ...created, active: true })
      yield* Console.log(created.profileId)
      if (active !== undefined) yield* Console.error(`${active.name} is now the active profile`)
    })
  )).pipe(Command.withDescription("Create a provider profile (its key is stored encrypted); prints its id."))

const profilesList = Command.make("list", { json: jsonFlag }, ({ json }) =>
  withAdmin((client) =>
    Effect.gen(function*() {
      const { profiles } = yield* client.admin.listProfiles()
      if (json) return yield* printJson({ profiles })
      if (profiles.length === 0) return yield* Console.log("no provider profiles")
      for (const profile of profiles) yield* Console.log(profileLine(profile))
    })
  )).pipe(Command.withDescription("The provider profiles, the active one marked *, never a key."))

const profilesActivate = Command.make("activate", {
  profileId: Argument.String("profileId").pipe(Argument.withDescription("The profile to make active")),
  json: jsonFlag
}, ({ json, profileId }) =>
  withAdmin((client) =>
    Effect.gen(function*() {
      const profile = yield* client.admin.activateProfile({ params: { profileId } })
      yield* json ? printJson(profile) : Console.log(`active: ${profile.profileId} (${profile.name})`)
    })
  )).pipe(Command.withDescription("Make a profile the active one (exactly one is active)."))

const profiles = Command.make("profiles").pipe(
  Command.withDescription("Provider profiles: which provider, model and key the planner proxy uses."),
  Command.withSubcommands([profilesAdd, profilesList, profilesActivate])
)

// ---------------------------------------------------------------------------
// decisions, prune, rotate-credential-key

const decisions = Command.make("decisions", {
  taskId: Argument.String("taskId").pipe(Argument.withDescription("The task whose decisions to show")),
  attempt: Flag.Int("attempt").pipe(Flag.withDescription("Only this attempt"), Flag.optional),
  json: jsonFlag
}, ({ attempt, json, taskId }) =>
  withAdmin((client) =>
    Effect.gen(function*() {
      // Every page, one after the other (a page ends at 1,000 decisions or 16 MiB of prompts).
      const all = yield* allPages((cursor) =>
        client.admin.listDecisions({ query: { taskId, ...(Option.isSome(attempt) ? { attempt: attempt.value } : {}), ...cursor } }), (page) => page.decisions)
      if (json) return yield* printJson({ decisions: all })
      if (all.length === 0) return yield* Console.log("no decisions")
      for (const d of all) {
        yield* Console.log(`attempt ${d.attempt} step ${d.stepIndex}  ${d.createdAt}  ${d.toolName} ${JSON.stringify(d.arguments)}`)
      }
    })
  )).pipe(
    Command.withDescription(
      "A task's persisted planner decisions (cloud-proxy transport only), one line each; --json adds the prompts."
    )
  )

const prune = Command.make("prune", { json: jsonFlag }, ({ json }) =>
  withAdmin((client) =>
    Effect.gen(function*() {
      const report = yield* client.admin.pruneDecisions()
      yield* json
        ? printJson(report)
        : Console.log(`deleted ${report.deleted} decisions` + (report.usageRows === undefined ? "" : `, ${report.usageRows} hourly usage rows`))
    })
  )).pipe(
    Command.withDescription("Run the retention sweep now: deletes decisions of tasks terminal longer than PLANNER_DECISION_RETENTION.")
  )

const rotate = Command.make("rotate-credential-key", { json: jsonFlag }, ({ json }) =>
  withAdmin((client) =>
    Effect.gen(function*() {
      const report = yield* client.admin.rotateCredentialKey()
      if (json) return yield* printJson(report)
      const mcp = report.mcpHeaders ?? { reencrypted: 0, alreadyCurrent: 0, undecryptable: [] }
      const failed = [...report.undecryptable, ...mcp.undecryptable]
      yield* Console.log(
        `re-encrypted ${report.reencrypted}, already current ${report.alreadyCurrent}; agents' MCP headers: re-encrypted ` +
          `${mcp.reencrypted}, already current ${mcp.alreadyCurrent}; every credential is now under key ${report.keyId}` +
          (failed.length === 0 ? "" : ` except (undecryptable): ${failed.join(", ")}`)
      )
      if (failed.length > 0) return yield* new CliFailure({ message: "some credentials could not be re-encrypted" })
    })
  )).pipe(
    Command.withDescription(
      "Re-encrypt every provider profile and agent MCP header under the current CREDENTIAL_KEY (values under CREDENTIAL_KEY_PREVIOUS included)."
    )
  )

export const adminCommand = adminRoot.pipe(
  Command.withDescription(
    "Operate the server: hosts, tasks, chats, provider profiles, decisions, agents, sub-agent kinds (needs ADMIN_TOKEN)."
  ),
  Command.withShortDescription("Operate hosts, tasks, chats, provider profiles, the decision log, agents and sub-agent kinds"),
  Command.withSubcommands([hosts, tasks, chats, profiles, decisions, prune, rotate, usage, agentsGroup, subagentsGroup])
)
