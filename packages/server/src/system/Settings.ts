/**
 * The one list of every setting the server reads, each declared once beside
 * its feature (`process/Setting.ts`), checked before anything starts
 * (`main.ts`): an invalid value stops the process with one line per variable
 * (`InvalidSetting.ts`) — never a warning and a guessed default, never a
 * stack trace. An unset variable takes its default; a missing provider
 * (`LLM_PROVIDER`, `LLM_MODEL`, `LLM_API_KEY`) still starts the server, the
 * chat route answering 502 `provider_not_configured` (docs/chat.md) — only a
 * value that is set and wrong refuses.
 *
 * A value is refused by its rule, or by its feature's own `config` failing to
 * read it: what gets past the start is what the feature can read. Grouped as
 * docs/configuration.md's tables are; `Settings.test.ts` proves every setting
 * declared is here and in those tables.
 */
import { Cause, ConfigProvider, Effect, Exit } from "effect"
import { AdminTokenSetting } from "../admin/AdminAuth.ts"
import { DefaultAgentSetting } from "../agents/AgentSettings.ts"
import { McpTimeoutMsSetting, McpToolsTtlMsSetting } from "../mcp/McpSettings.ts"
import { MaxMessagesSetting, TranscriptMaxBytesSetting, TranscriptMaxMessagesSetting, TurnMarkerGraceMsSetting } from "../chat/ChatSettings.ts"
import * as Provider from "../chat/ProviderSettings.ts"
import * as Database from "../db/DatabaseSettings.ts"
import { TaskLeaseSecondsSetting } from "../hosts/HostsHttp.ts"
import { ChatTokenSetting } from "../http/ChatAuth.ts"
import { ConsoleImageOriginsSetting } from "../http/ConsoleImageOrigins.ts"
import { CorsOriginsSetting } from "../http/Cors.ts"
import { WebDirSetting } from "../http/WebConsole.ts"
import * as Jobs from "../jobs/JobsConfig.ts"
import * as Subagents from "../jobs/subagents/SubagentConfig.ts"
import { MaxConcurrentDecisionsSetting, MaxConcurrentTurnsSetting } from "../limits/Admission.ts"
import { ChatRpmSetting, PlannerHostRpmSetting } from "../limits/RateLimits.ts"
import { CredentialKeyPreviousSetting, CredentialKeySetting } from "../secrets/CredentialKeys.ts"
import * as Retention from "../planner/DecisionRetention.ts"
import { MaxStepsSetting } from "../planner/PlannerDecisions.ts"
import { TaskMaxAttemptsSetting } from "../hosts/TaskAttempts.ts"
import { hasConfig } from "../process/Setting.ts"
import type { Env, SettingRule } from "../process/SettingRule.ts"
import { isUnset, refusalLine, ruleRefusal } from "../process/SettingRule.ts"
import * as Telemetry from "../telemetry/TelemetrySettings.ts"
import { HostDailyTokensSetting, UserDailyTokensSetting } from "../usage/BudgetWindow.ts"
import * as Auth from "../users/JwtAuth.ts"
import { HeapGrowingPercentRule, PretenuringRule, SchemaJitRule } from "./RuntimeSettings.ts"
import { HostSetting, LogFormatSetting, LogLevelSetting, PortSetting } from "./ServerSettings.ts"

export const SETTINGS: ReadonlyArray<SettingRule> = [
  // Listening and the chat route
  HostSetting,
  PortSetting,
  ChatTokenSetting,
  Auth.AuthJwksUrlSetting,
  Auth.AuthJwtSecretSetting,
  Auth.AuthIssuerSetting,
  Auth.AuthAudienceSetting,
  MaxMessagesSetting,
  TranscriptMaxMessagesSetting,
  TranscriptMaxBytesSetting,
  ChatRpmSetting,
  MaxConcurrentTurnsSetting,
  MaxConcurrentDecisionsSetting,
  CorsOriginsSetting,
  // Database
  Database.DatabaseUrlSetting,
  Database.DatabaseWaitSecondsSetting,
  Database.DatabaseMaxConnectionsSetting,
  Database.DataDirSetting,
  // The chat route's provider
  Provider.LlmProviderRule,
  Provider.LlmModelSetting,
  Provider.LlmApiKeyRule,
  Provider.LlmBaseUrlRule,
  Provider.LlmTimeoutMsSetting,
  Provider.LlmTransportRule,
  Provider.LlmTranscriptionModelRule,
  Provider.LlmMaxTokensRule,
  Provider.LlmMaxResponseBytesRule,
  Provider.LlmScriptRule,
  // Observability and the runtime
  LogLevelSetting,
  LogFormatSetting,
  Telemetry.TracingSetting,
  Telemetry.OtlpEndpointSetting,
  Telemetry.OtlpProtocolSetting,
  Telemetry.CaptureContentSetting,
  Telemetry.ServiceNameSetting,
  Telemetry.ResourceAttributesRule,
  Telemetry.MetricsTokenSetting,
  SchemaJitRule,
  PretenuringRule,
  HeapGrowingPercentRule,
  // Agents and their MCP servers
  DefaultAgentSetting,
  McpTimeoutMsSetting,
  McpToolsTtlMsSetting,
  // Jobs and sub-agents
  Jobs.JobConcurrencySetting,
  Jobs.JobTimeoutMsSetting,
  Jobs.JobLeaseMsSetting,
  Jobs.JobSweepMsSetting,
  Jobs.JobMaxActivePerChatSetting,
  Jobs.ApprovalTimeoutSetting,
  ...Object.values(Subagents.ModelSettings),
  Subagents.SearchUrlSetting,
  Subagents.FetchAllowPrivateSetting,
  Subagents.ChromiumPathSetting,
  WebDirSetting,
  ConsoleImageOriginsSetting,
  Subagents.VisualVisionSetting,
  TurnMarkerGraceMsSetting,
  // Hosts and the planner
  AdminTokenSetting,
  HostDailyTokensSetting,
  UserDailyTokensSetting,
  CredentialKeySetting,
  CredentialKeyPreviousSetting,
  Retention.DecisionRetentionSetting,
  Retention.PruneIntervalSecondsSetting,
  Retention.PruneBatchSizeSetting,
  Retention.PruneBatchMillisSetting,
  PlannerHostRpmSetting,
  MaxStepsSetting,
  TaskLeaseSecondsSetting,
  TaskMaxAttemptsSetting
]

export const settingNamed = (name: string): SettingRule | undefined => SETTINGS.find((s) => s.name === name)

/** The message of Effect's `ConfigError` (a `SchemaError`'s, its path naming the variable); undefined for another error. */
const configMessage = (error: unknown): string | undefined => {
  if (typeof error !== "object" || error === null || (error as { _tag?: unknown })._tag !== "ConfigError") return undefined
  return String((error as { cause?: { message?: unknown } }).cause?.message ?? (error as Error).message)
}

/** The setting's own expectation, else the schema's (`Expected a string representing a finite number`). */
const unreadLine = (rule: SettingRule, env: Env, message: string): string =>
  refusalLine(rule, env, rule.expected ?? message.split("\n")[0]!.replace(/^Expected /, ""))

/** A `ConfigError` as the line of the variable it names (a start that got further: `StartupFailure.ts`). */
export const configErrorLine = (error: unknown, env: Env): string | undefined => {
  const message = configMessage(error)
  if (message === undefined) return undefined
  const name = /at \["([^"]+)"\]/.exec(message)?.[1]
  if (name === undefined) return `invalid configuration: ${message.split("\n")[0]}`
  return unreadLine(settingNamed(name) ?? { name }, env, message)
}

/** The line of the feature's `config` failing on a value its rule let through. */
const unreadable = (rule: SettingRule, env: Env, provider: ConfigProvider.ConfigProvider): string | undefined => {
  if (!hasConfig(rule) || isUnset(rule, env)) return undefined
  const read = Effect.runSyncExit(rule.config.parse(provider))
  if (Exit.isSuccess(read)) return undefined
  const error = Cause.squash(read.cause)
  return unreadLine(rule, env, configMessage(error) ?? String(error))
}

/** The line of each invalid setting in `env`, in the list's order; empty when all are fine. */
export const invalidSettings = (env: Env, settings: ReadonlyArray<SettingRule> = SETTINGS): ReadonlyArray<string> => {
  // As the server reads `process.env`: an empty value is no value.
  const provider = ConfigProvider.fromEnvRecord({ ...env })
  return settings.flatMap((rule) => {
    const line = ruleRefusal(rule, env) ?? unreadable(rule, env, provider)
    return line === undefined ? [] : [line]
  })
}
