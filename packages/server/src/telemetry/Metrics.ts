/**
 * The process's metrics (docs/observability.md), in Effect's metric registry
 * and served as Prometheus text by `GET /metrics` (`MetricsHttp.ts`).
 *
 * Recording is the hot path's, so each function here is synchronous and
 * costs a map look-up and a number added: the series of one label set is
 * made once and kept (`series`), then updated in place — never a statement,
 * never a fiber, never a context built per request. Labels come only from
 * bounded sets (a route's template, never its path; a known method; the
 * configured models), so a scrape stays small however many requests came.
 *
 * Counters are this process's since it started: Prometheus scrapes every
 * replica and sums them.
 */
import type { ProviderUsage } from "@switchboard/domain"
import { Context, Metric } from "effect"

/** Metrics are read and written outside any fiber's context: Effect's default (process-wide) registry. */
const noContext = Context.empty()

/** One series per label set, made on first use. */
const series = <M>(make: (labels: Record<string, string>) => M) => {
  const made = new Map<string, M>()
  return (labels: Record<string, string>): M => {
    const key = Object.values(labels).join("\u0000")
    let metric = made.get(key)
    if (metric === undefined) {
      metric = make(labels)
      made.set(key, metric)
    }
    return metric
  }
}

/** Seconds: a fast route's answer up to a provider call's deadline. */
const REQUEST_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
const PROVIDER_SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120]
/** A steer's lag: a free chat delivers it within a second; a busy one waits for its turn to end. */
const LAG_SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600]

const counter = (name: string, description: string) =>
  series((attributes) => Metric.counter(name, { description, attributes }))
const histogram = (name: string, description: string, boundaries: ReadonlyArray<number>) =>
  series((attributes) => Metric.histogram(name, { description, boundaries, attributes }))

const requests = counter("switchboard_http_requests_total", "HTTP requests answered, by route template, method and status")
const requestSeconds = histogram(
  "switchboard_http_request_duration_seconds",
  "Time to an HTTP request's answer (its headers: a stream's body may go on), by route template and method",
  REQUEST_SECONDS
)
const tooMany = counter("switchboard_http_429_total", "Requests refused with 429 (rate limit or token budget), by route template")
const providerSeconds = histogram(
  "switchboard_provider_call_duration_seconds",
  "Provider calls by kind (chat, wake, job, planner), provider, model and outcome (ok, error)",
  PROVIDER_SECONDS
)
const providerTokens = counter(
  "switchboard_provider_tokens_total",
  "Tokens the provider reported, by kind, provider, model and type (input, output, cached_input)"
)
const decisions = counter("switchboard_planner_decisions_total", "Planner decisions by outcome (ok, or the error code answered)")
const steerLag = histogram(
  "switchboard_steer_lag_seconds",
  "From a job's result stored to its steer delivered by a wake turn, by job kind",
  LAG_SECONDS
)

const inFlight = series((attributes) =>
  Metric.gauge("switchboard_in_flight", {
    description: "Admitted work running on this replica now, by kind (turn: chat turns; decision: planner decisions)",
    attributes
  })
)
const refused = counter(
  "switchboard_overloaded_total",
  "Requests refused with 503 overloaded (MAX_CONCURRENT_TURNS, PLANNER_MAX_CONCURRENT_DECISIONS), by kind"
)

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])

/** One answered request. `route`: its template (`/api/chats/:chatId`), or `unmatched`. */
export const recordRequest = (route: string, method: string, status: number, seconds: number) => {
  const m = METHODS.has(method) ? method : "OTHER"
  requests({ route, method: m, status: String(status) }).updateUnsafe(1, noContext)
  requestSeconds({ route, method: m }).updateUnsafe(seconds, noContext)
  if (status === 429) tooMany({ route }).updateUnsafe(1, noContext)
}

/** Who a provider call served. */
export type CallKind = "chat" | "wake" | "job" | "planner"

export interface ProviderCall {
  readonly kind: CallKind
  readonly provider: string
  readonly model: string
}

/** One provider call, ended: its duration, whether it answered, and its usage when the provider reported it. */
export const recordProviderCall = (call: ProviderCall, ok: boolean, seconds: number, usage: ProviderUsage | undefined) => {
  const { kind, model, provider } = call
  providerSeconds({ kind, provider, model, outcome: ok ? "ok" : "error" }).updateUnsafe(seconds, noContext)
  if (usage === undefined) return
  providerTokens({ kind, provider, model, type: "input" }).updateUnsafe(usage.inputTokens, noContext)
  providerTokens({ kind, provider, model, type: "output" }).updateUnsafe(usage.outputTokens, noContext)
  if (usage.cachedInputTokens !== undefined) {
    providerTokens({ kind, provider, model, type: "cached_input" }).updateUnsafe(usage.cachedInputTokens, noContext)
  }
}

/** One planner decision answered: `ok`, or the error's code (a bounded set: the route's documented errors). */
export const recordDecision = (outcome: string) => decisions({ outcome }).updateUnsafe(1, noContext)

/** A steer delivered `seconds` after its job's result was stored. */
export const recordSteerLag = (jobKind: string, seconds: number) =>
  steerLag({ job_kind: jobKind }).updateUnsafe(Math.max(0, seconds), noContext)

/** What admission bounds (`limits/Admission.ts`). */
export type AdmittedKind = "turn" | "decision"

/** How many of `kind` run now on this replica. */
export const recordInFlight = (kind: AdmittedKind, count: number) => inFlight({ kind }).updateUnsafe(count, noContext)

/** One request of `kind` refused because the replica was at its limit. */
export const recordOverloaded = (kind: AdmittedKind) => refused({ kind }).updateUnsafe(1, noContext)

/** An MCP call is a network round trip to another service: milliseconds up to `MCP_TIMEOUT_MS`. */
const MCP_SECONDS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
const mcpCalls = counter(
  "switchboard_mcp_calls_total",
  "MCP tool calls the server ran, by the agent's server name and outcome (ok, tool_error, timeout, unreachable, too_large)"
)
const mcpCallSeconds = histogram("switchboard_mcp_call_duration_seconds", "MCP tool calls' duration, by server and outcome", MCP_SECONDS)
const mcpUnlisted = counter(
  "switchboard_mcp_list_failures_total",
  "MCP servers left out of a turn because their tools could not be listed, by server"
)

export type McpOutcome = "ok" | "tool_error" | "timeout" | "unreachable" | "too_large"

/** One MCP tool call ended. `server` is an operator's name (bounded by the agents defined). */
export const recordMcpCall = (server: string, outcome: McpOutcome, seconds: number) => {
  mcpCalls({ server, outcome }).updateUnsafe(1, noContext)
  mcpCallSeconds({ server, outcome }).updateUnsafe(Math.max(0, seconds), noContext)
}

/** A server whose tools a turn could not list (left out of that turn). */
export const recordMcpListFailure = (server: string) => mcpUnlisted({ server }).updateUnsafe(1, noContext)
