/**
 * The server, assembled: the HttpApi routes with their handlers, the docs
 * page, the web console, JSON errors everywhere, the database and the provider — listening on
 * `HOST:PORT`.
 */
// Modules, not the package index: the index loads every platform module (~25 MB more memory).
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Api } from "@switchboard/domain"
import { Config, Effect, Layer, Logger, References } from "effect"
import { HttpRouter } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import * as AdminAuth from "./admin/AdminAuth.ts"
import { AdminHttp } from "./admin/AdminHttp.ts"
import { Agents } from "./agents/Agents.ts"
import { AgentsAdminHttp, AgentsHttp } from "./agents/AgentsHttp.ts"
import { ChatHttp } from "./chat/ChatHttp.ts"
import { ChatRepo } from "./chat/ChatRepo.ts"
import { ChatTurns } from "./chat/ChatTurns.ts"
import * as Approvals from "./approvals/Approvals.ts"
import { ApprovalsRepo } from "./approvals/ApprovalsRepo.ts"
import { TurnComposer } from "./chat/turn/TurnComposer.ts"
import { TurnStreams } from "./chat/stream/TurnStreams.ts"
import * as Database from "./db/Database.ts"
import * as HostAuth from "./hosts/HostAuth.ts"
import { HostsHttp } from "./hosts/HostsHttp.ts"
import { HostsRepo } from "./hosts/HostsRepo.ts"
import { TasksRepo } from "./hosts/TasksRepo.ts"
import { DOCS_ROUTES, layerApiDocs } from "./http/ApiDocs.ts"
import * as ChatAuth from "./http/ChatAuth.ts"
import * as JsonErrors from "./http/JsonErrors.ts"
import { createNodeServer } from "./http/NodeServer.ts"
import { Admission } from "./limits/Admission.ts"
import { RateLimits } from "./limits/RateLimits.ts"
import * as RequestErrors from "./http/RequestErrors.ts"
import { routeTable } from "./http/RouteTable.ts"
import * as WebConsole from "./http/WebConsole.ts"
import { ProviderPools } from "@switchboard/providers"
import type { ProviderAdapter, Transcriber } from "@switchboard/providers"
import * as ProviderConfig from "@switchboard/providers"
import * as CredentialCheck from "./planner/CredentialCheck.ts"
import { CredentialKeys } from "./secrets/CredentialKeys.ts"
import { DecisionRetention, layerSweep } from "./planner/DecisionRetention.ts"
import { DecisionsRepo } from "./planner/DecisionsRepo.ts"
import { PlannerDecisions } from "./planner/PlannerDecisions.ts"
import { PlannerHttp } from "./planner/PlannerHttp.ts"
import { ProfilesRepo } from "./planner/ProfilesRepo.ts"
import { ProviderProfiles } from "./planner/ProviderProfiles.ts"
import { batchedJsonLogger } from "./system/BatchedLog.ts"
import { InvalidSetting, withStartupChecks } from "./system/StartupFailure.ts"
import { HostSetting, LogFormatSetting, LogLevelSetting, PortSetting } from "./system/ServerSettings.ts"
import { SystemHttp } from "./system/SystemHttp.ts"
import { JobsBackground } from "./jobs/Jobs.ts"
import { JobsConfig } from "./jobs/JobsConfig.ts"
import { JobsHttp } from "./jobs/JobsHttp.ts"
import * as JobApprovals from "./jobs/JobApprovals.ts"
import { SubagentKinds } from "./jobs/kinds/SubagentKinds.ts"
import { SubagentKindsHttp } from "./jobs/kinds/SubagentKindsHttp.ts"
import { JobSignals } from "./jobs/JobSignals.ts"
import { JobsRepo } from "./jobs/JobsRepo.ts"
import * as JobTools from "./jobs/JobTools.ts"
import type { Subagents } from "./jobs/Subagents.ts"
import * as RealSubagents from "./jobs/subagents/RealSubagents.ts"
import { HostBudgets } from "./usage/HostBudgets.ts"
import { UsageLedger } from "./usage/UsageLedger.ts"
import { UsageReports } from "./usage/UsageReports.ts"
import { UsageRepo } from "./usage/UsageRepo.ts"
import { observedServerTools } from "./chat/ObservedServerTools.ts"
import { allServerTools, ServerTools } from "./chat/ServerTools.ts"
import { McpClients } from "./mcp/McpClients.ts"
import * as McpTools from "./mcp/McpTools.ts"
import { observedProvider } from "./usage/ObservedProvider.ts"
import { budgetedProvider, UserBudgets } from "./usage/UserBudgets.ts"
import * as MetricsHttp from "./telemetry/MetricsHttp.ts"
import * as RequestMetrics from "./telemetry/RequestMetrics.ts"
import * as Tracing from "./telemetry/Tracing.ts"

/**
 * The host control plane and the planner proxy: repositories over the
 * database, the credential keys and provider pools, the decision service,
 * this replica's retention sweep and the start-up warning about profiles no
 * held key decrypts. The planner takes nothing from the chat
 * route's provider configuration: its provider comes from the active profile.
 */
export const PlannerServices = Layer.mergeAll(PlannerDecisions.layer, ProviderProfiles.layer, layerSweep, CredentialCheck.layer).pipe(
  Layer.provideMerge(DecisionRetention.layer),
  Layer.provideMerge(Layer.mergeAll(
    HostsRepo.layer,
    TasksRepo.layer,
    ProfilesRepo.layer,
    DecisionsRepo.layer,
    ProviderPools.layer
  ))
)

/**
 * Token usage (docs/usage.md): the shared hourly rows, this replica's ledger that adds to them,
 * and hosts' budgets read from them. Every provider call is counted where it is measured
 * (`telemetry/GenAi.ts`, `providerCall`).
 */
export const UsageServices = Layer.mergeAll(HostBudgets.layer, UserBudgets.layer).pipe(
  Layer.provideMerge(UsageLedger.layer),
  Layer.provideMerge(UsageRepo.layer)
)

/** What the server runs sub-agents with: the real ones, over the configured provider. */
export type SubagentsLayer<E = never, R = never> = Layer.Layer<Subagents, E, R | ProviderAdapter>

/**
 * All routes and the job pipeline's background loops, needing the database
 * (`SqlClient`, `PgClient`) and the provider services. `subagents` and
 * `jobsConfig` are the real ones unless a test brings its own.
 */
export const makeApp = <E, R, E2 = never, R2 = never>(
  provider: Layer.Layer<ProviderAdapter | Transcriber, E, R>,
  subagents: SubagentsLayer<E2, R2> = RealSubagents.layer as SubagentsLayer<E2, R2>,
  jobsConfig: Layer.Layer<JobsConfig> = JobsConfig.layer
) => {
  // The chat turns get the job tools and the agents' MCP tools through chat's server tools port
  // (chat/ServerTools.ts). The provider and the server tools are observed (telemetry/GenAi.ts):
  // metrics, and spans when tracing.
  const serverTools = Layer.effect(ServerTools, Effect.map(Effect.all([JobTools.make, McpTools.make]), allServerTools)).pipe(
    Layer.provide(McpClients.layer)
  )
  // The defined sub-agent kinds (jobs/kinds/): read by the job tools per turn, written by operators.
  const subagentKinds = SubagentKinds.layer
  const core = TurnComposer.layerNoDeps.pipe(
    Layer.provideMerge(observedServerTools(serverTools)),
    Layer.provideMerge(JobSignals.layer),
    Layer.provideMerge(Layer.mergeAll(ChatRepo.layer, JobsRepo.layer)),
    Layer.provideMerge(budgetedProvider(observedProvider(provider)))
  )
  // Sub-agent steps call the provider through an adapter of their own (its own connection pool):
  // however many jobs run, they hold none of the sockets a user's turn reaches its provider by.
  const jobsProvider = Layer.fresh(budgetedProvider(observedProvider(provider)))
  // A defined kind's MCP servers are listed and called through their own clients' cache.
  const background = JobsBackground.pipe(
    Layer.provide(Layer.provide(subagents, Layer.mergeAll(jobsProvider, McpClients.layer))),
    Layer.provide(jobsConfig)
  )
  // Approvals (approvals/): the decisions chat's routes take, and their continuations.
  const chat = Layer.mergeAll(ChatTurns.layerNoDeps, background).pipe(
    // A decision of a parked sub-agent job's call goes to the jobs feature (jobs/JobApprovals.ts).
    Layer.provideMerge(Approvals.layer.pipe(Layer.provide([ApprovalsRepo.layer, JobApprovals.layer]))),
    Layer.provideMerge(TurnStreams.layer),
    Layer.provideMerge(core),
    Layer.provideMerge(subagentKinds),
    Layer.provideMerge(Agents.layer)
  )
  // Fresh: two apps built together (replicas in one test process) share no in-memory service
  // (each has its own job runner, wake pipeline and signals, as separate processes would).
  const services = Layer.fresh(Layer.mergeAll(chat, PlannerServices, UsageReports.layer, RateLimits.layer, Admission.layer).pipe(
    Layer.provideMerge(UsageServices),
    // The provider profiles' keys and the agents' MCP headers are sealed under the same key.
    Layer.provideMerge(CredentialKeys.layer)
  ))
  const api = HttpApiBuilder.layer(Api).pipe(
    Layer.provide([ChatHttp, JobsHttp, SystemHttp, HostsHttp, PlannerHttp, AdminHttp, AgentsHttp, AgentsAdminHttp, SubagentKindsHttp]),
    Layer.provide([HostAuth.layer, AdminAuth.layer]),
    Layer.provide(services),
    Layer.provide([ChatAuth.layer, RequestErrors.layer, NodeServices.layer])
  )
  const routes = routeTable(Api, [...DOCS_ROUTES, ...WebConsole.CONSOLE_ROUTES, ...MetricsHttp.METRICS_ROUTES])
  return Layer.mergeAll(
    api,
    layerApiDocs(Api),
    WebConsole.layer,
    MetricsHttp.layer.pipe(Layer.provide(Approvals.layerGauges)),
    // The request metrics are built (so added) first: the outermost middleware, they see the JSON answers.
    JsonErrors.layer(routes).pipe(Layer.provide(RequestMetrics.layer(routes.routes)))
  )
}

/**
 * The router's limit on one path parameter (find-my-way's default is 100):
 * above every documented id (chat ids go to 128), so a longer one reaches the
 * schema and gets a 400 naming it instead of a 404 "No route".
 */
export const ROUTER_CONFIG = { maxParamLength: 1024 }

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"])

export const ListenConfig = Config.all({
  host: HostSetting.config,
  port: PortSetting.config,
  chatToken: ChatAuth.ChatTokenSetting.config
})

/** Refuses a non-loopback address without `CHAT_TOKEN`: the chat route spends the operator's provider key. */
export const checkListenConfig = (config: { host: string; chatToken: string | undefined }) =>
  LOOPBACK.has(config.host) || (config.chatToken !== undefined && config.chatToken !== "")
    ? Effect.void
    : Effect.fail(new InvalidSetting({
      message: `HOST ${JSON.stringify(config.host)} is not a loopback address and CHAT_TOKEN is not set: set CHAT_TOKEN, or HOST=127.0.0.1`
    }))

export const makeServer = <E, R>(provider: Layer.Layer<ProviderAdapter | Transcriber, E, R>) =>
  Layer.unwrap(Effect.gen(function*() {
    const config = yield* ListenConfig
    yield* checkListenConfig(config)
    // The port is bound first (Layer.provide builds the outer layer first) and answers at once while the
    // database starts: /healthz 200, everything else 503 not_ready (see NodeServer.ts).
    return HttpRouter.serve(makeApp(provider), { routerConfig: ROUTER_CONFIG }).pipe(
      Layer.provide(JsonErrors.layerBodyLimit),
      Layer.provide(Database.layer),
      Layer.provide(NodeHttpServer.layer(createNodeServer, { port: config.port, host: config.host, backlog: LISTEN_BACKLOG }))
    )
  }))

/**
 * The accept queue asked of the kernel (which clamps it to `net.core.somaxconn`). Node's default, 511,
 * turns away part of a burst of users connecting at once, and a turned-away client sends its SYN again
 * only a second later (then 3 s, 7 s): a second or more on that turn before it is even admitted.
 */
const LISTEN_BACKLOG = 65_535

/**
 * Observability settings. `LOG_FORMAT=json` for log shippers, written in
 * batches (`BatchedLog.ts`; default: the readable console format); `LOG_LEVEL` (default `info`, which includes one
 * line per HTTP request; `warn` drops those). `TRACING=on` records Effect
 * spans (named span frames in the stack traces of logged defects); it is off
 * by default because, measured with `npm run bench`, the spans alone cost a
 * third of the chat route's throughput. `OTEL_EXPORTER_OTLP_ENDPOINT` turns it
 * on and exports the spans (`telemetry/Tracing.ts`).
 */
export const layerObservability = Layer.unwrap(Effect.gen(function*() {
  const format = yield* LogFormatSetting.config
  const level = yield* LogLevelSetting.config
  return Layer.mergeAll(
    format === "json" ? Logger.layer([batchedJsonLogger()]) : Layer.empty,
    Layer.succeed(References.MinimumLogLevel, level),
    Tracing.layer
  )
}))

/**
 * The production server: configuration from the environment, runs until
 * interrupted. An invalid setting, or an address it cannot listen on, stops
 * it with one line on stderr (`system/StartupFailure.ts`).
 */
export const runServer: Effect.Effect<never, unknown> = withStartupChecks(Layer.launch(
  makeServer(ProviderConfig.layer).pipe(Layer.provide(layerObservability))
))
