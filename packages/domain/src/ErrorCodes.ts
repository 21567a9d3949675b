/**
 * The error codes and their HTTP statuses (docs/errors.md), and the shape of a provider failure's
 * `reason`: what every declared error (`Errors.ts`, `PlannerErrors.ts`) is built on.
 */
import { Schema } from "effect"


/**
 * Every code the server answers an error with, and its HTTP status: the one
 * table the declared errors below, the server's HTTP layer and the clients
 * read. Some codes are the HTTP layer's only, for what no operation declares
 * (a refusal of Node's HTTP parser, a client gone before its answer).
 */
export const statusOfCode = {
  invalid_request: 400,
  too_many_messages: 400,
  too_many_parts: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  chat_not_found: 404,
  host_not_found: 404,
  task_not_found: 404,
  profile_not_found: 404,
  agent_not_found: 404,
  approval_not_found: 404,
  subagent_not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  turn_in_flight: 409,
  lease_lost: 409,
  task_cancelled: 409,
  task_terminal: 409,
  step_limit: 409,
  host_revoked: 409,
  profile_name_taken: 409,
  agent_mismatch: 409,
  chat_full: 409,
  agent_exists: 409,
  agent_builtin: 409,
  approval_decided: 409,
  subagent_builtin: 409,
  subagent_in_use: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  expectation_failed: 417,
  budget_exceeded: 429,
  rate_limited: 429,
  headers_too_large: 431,
  client_closed_request: 499,
  internal_error: 500,
  provider_error: 502,
  provider_not_configured: 502,
  no_tool_call: 502,
  multiple_tool_calls: 502,
  invalid_tool_call: 502,
  not_ready: 503,
  database_unavailable: 503,
  no_active_profile: 503,
  credential_unavailable: 503,
  unavailable: 503,
  overloaded: 503,
  provider_timeout: 504
} as const satisfies Record<string, number>
export type ErrorCode = keyof typeof statusOfCode

/** The status of a code the server sent, or undefined for one this table does not know (a newer server's). */
export const statusOf = (code: string): number | undefined =>
  Object.hasOwn(statusOfCode, code) ? statusOfCode[code as ErrorCode] : undefined


/**
 * Why a provider call failed, safe to show: a kind, never the provider's own
 * text (which may quote the request or a key). `status_<code>` for an error
 * status; the others are fixed words. Open-ended: a client must accept a
 * reason it does not know.
 */
export const ProviderFailureReason = Schema.String.check(Schema.isPattern(/^[a-z][a-z0-9_]{0,39}$/, {
  description: "`connection_refused`, `connection_reset`, `dns` (the provider's host name does not resolve), " +
    "`unreachable` (another network failure), `timeout`, `status_<code>` (the provider answered that HTTP status, " +
    "e.g. `status_401`, `status_429`, `status_500`), `invalid_response` (an answer that is not JSON or not the " +
    "API's shape), `too_large` (an answer over `LLM_MAX_RESPONSE_BYTES`, or a message over what the server stores), " +
    "`not_configured`; more may be added"
}))
export type ProviderFailureReason = typeof ProviderFailureReason.Type
