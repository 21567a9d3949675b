/**
 * The errors a client can see. Each carries its HTTP status and a fixed
 * snake_case `code`, and none has a `_tag` on the wire: every error body is
 * `{ error, code, ...details }` (docs/errors.md).
 */
import { Schema } from "effect"

export class InvalidRequest extends Schema.Error<InvalidRequest>("InvalidRequest")({
  error: Schema.String,
  code: Schema.tag("invalid_request")
}, { httpApiStatus: 400, description: "The body, path or query does not match the schema; `error` names the offending path" }) {}

export class Unauthenticated extends Schema.Error<Unauthenticated>("Unauthenticated")({
  error: Schema.String,
  code: Schema.tag("unauthenticated")
}, { httpApiStatus: 401, description: "`CHAT_TOKEN` is set and the request lacks `Authorization: Bearer $CHAT_TOKEN`" }) {}

export class ChatNotFound extends Schema.Error<ChatNotFound>("ChatNotFound")({
  error: Schema.String,
  code: Schema.tag("chat_not_found"),
  chatId: Schema.String
}, { httpApiStatus: 404, description: "No turn was ever persisted under this `chatId`, or the operator deleted the chat" }) {}

export class TurnInFlight extends Schema.Error<TurnInFlight>("TurnInFlight")({
  error: Schema.String,
  code: Schema.tag("turn_in_flight"),
  chatId: Schema.String
}, { httpApiStatus: 409, description: "Another turn of this chat is in flight; retry once it has answered" }) {}

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

export class ProviderFailed extends Schema.Error<ProviderFailed>("ProviderFailed")({
  error: Schema.tag("LLM provider error"),
  code: Schema.tag("provider_error"),
  /** Always sent by this server; optional so that a client still reads an older server's answer. */
  reason: Schema.optionalKey(ProviderFailureReason)
}, { httpApiStatus: 502, description: "The LLM provider failed or answered something unusable; `reason` says how" }) {}

export class ProviderNotConfigured extends Schema.Error<ProviderNotConfigured>("ProviderNotConfigured")({
  error: Schema.String,
  code: Schema.tag("provider_not_configured"),
  missing: Schema.Array(Schema.String)
}, { httpApiStatus: 502, description: "The server lacks provider settings; `missing` lists the variables" }) {}

/**
 * Readiness (`/readyz`), and every route while the server is still starting
 * (its database and migrations not up yet), with `Retry-After`.
 */
export class NotReady extends Schema.Error<NotReady>("NotReady")({
  error: Schema.String,
  code: Schema.tag("not_ready")
}, { httpApiStatus: 503, description: "Starting (every route, with `Retry-After`), or the database does not answer or migrations are pending (`/readyz`)" }) {}

/** A turn carrying more messages than the server takes in one request (`CHAT_MAX_MESSAGES`). */
export class TooManyMessages extends Schema.Error<TooManyMessages>("TooManyMessages")({
  error: Schema.String,
  code: Schema.tag("too_many_messages"),
  limit: Schema.Int
}, { httpApiStatus: 400, description: "More messages than `CHAT_MAX_MESSAGES` (default 1000) in one turn; `limit` is the limit" }) {}

/** A multipart body with more parts than the route takes; refused before the rest is read. */
export class TooManyParts extends Schema.Error<TooManyParts>("TooManyParts")({
  error: Schema.String,
  code: Schema.tag("too_many_parts"),
  limit: Schema.Int
}, { httpApiStatus: 400, description: "More multipart parts than the operation takes (`limit`)" }) {}

// The errors below are answered by the server's HTTP layer (packages/server/src/http/JsonErrors.ts)
// before, around or instead of a handler. They are declared on the operations anyway, so the
// OpenAPI document and the typed clients know every answer a route can give.

export class NotFound extends Schema.Error<NotFound>("NotFound")({
  error: Schema.String,
  code: Schema.tag("not_found")
}, { httpApiStatus: 404, description: "No such route (for instance a path parameter the router cannot match)" }) {}

export class MethodNotAllowed extends Schema.Error<MethodNotAllowed>("MethodNotAllowed")({
  error: Schema.String,
  code: Schema.tag("method_not_allowed")
}, { httpApiStatus: 405, description: "The path exists with other methods, listed in `Allow`" }) {}

export class PayloadTooLarge extends Schema.Error<PayloadTooLarge>("PayloadTooLarge")({
  error: Schema.String,
  code: Schema.tag("payload_too_large")
}, {
  httpApiStatus: 413,
  description: "The request body is larger than 10 MiB, or one value in it larger than the server stores " +
    "(4 MiB of JSON: a chat message, a planner prompt); `error` names it"
}) {}

export class UnsupportedMediaType extends Schema.Error<UnsupportedMediaType>("UnsupportedMediaType")({
  error: Schema.String,
  code: Schema.tag("unsupported_media_type")
}, { httpApiStatus: 415, description: "A body with another Content-Type than the operation takes" }) {}

export class InternalError extends Schema.Error<InternalError>("InternalError")({
  error: Schema.String,
  code: Schema.tag("internal_error")
}, { httpApiStatus: 500, description: "An unexpected server failure (logged; never a stack trace on the wire)" }) {}

export class DatabaseUnavailable extends Schema.Error<DatabaseUnavailable>("DatabaseUnavailable")({
  error: Schema.String,
  code: Schema.tag("database_unavailable")
}, { httpApiStatus: 503, description: "The database cannot be reached; retry after `Retry-After` seconds" }) {}

/** What any operation can answer, whatever it does. */
export const anyRouteErrors = [MethodNotAllowed, InternalError] as const

/** What an operation that reads a request body can answer about it. */
export const bodyErrors = [InvalidRequest, PayloadTooLarge, UnsupportedMediaType] as const

// ---------------------------------------------------------------------------
// Planner proxy and host control plane (docs/planner.md)

/** A host token of another host than the one the request names, or a task not assigned to that host. */
export class Forbidden extends Schema.Error<Forbidden>("Forbidden")({
  error: Schema.String,
  code: Schema.tag("forbidden")
}, { httpApiStatus: 403 }) {}

export class HostNotFound extends Schema.Error<HostNotFound>("HostNotFound")({
  error: Schema.String,
  code: Schema.tag("host_not_found"),
  hostId: Schema.String
}, { httpApiStatus: 404 }) {}

export class TaskNotFound extends Schema.Error<TaskNotFound>("TaskNotFound")({
  error: Schema.String,
  code: Schema.tag("task_not_found"),
  taskId: Schema.String
}, { httpApiStatus: 404 }) {}

export class ProfileNotFound extends Schema.Error<ProfileNotFound>("ProfileNotFound")({
  error: Schema.String,
  code: Schema.tag("profile_not_found"),
  profileId: Schema.String
}, { httpApiStatus: 404 }) {}

/** A provider profile name already taken. */
export class ProfileNameTaken extends Schema.Error<ProfileNameTaken>("ProfileNameTaken")({
  error: Schema.String,
  code: Schema.tag("profile_name_taken"),
  name: Schema.String
}, { httpApiStatus: 409 }) {}

/** The lease expired, or the attempt named is not the task's current one (the task was claimed again). */
export class LeaseLost extends Schema.Error<LeaseLost>("LeaseLost")({
  error: Schema.String,
  code: Schema.tag("lease_lost"),
  taskId: Schema.String
}, { httpApiStatus: 409 }) {}

/** The operator cancelled the task: the host must stop working on it (and report nothing). */
export class TaskCancelled extends Schema.Error<TaskCancelled>("TaskCancelled")({
  error: Schema.String,
  code: Schema.tag("task_cancelled"),
  taskId: Schema.String
}, { httpApiStatus: 409, description: "The operator cancelled the task: stop working on it" }) {}

/** A cancel of a task that has already ended (succeeded, failed or cancelled). */
export class TaskTerminal extends Schema.Error<TaskTerminal>("TaskTerminal")({
  error: Schema.String,
  code: Schema.tag("task_terminal"),
  taskId: Schema.String,
  status: Schema.String
}, { httpApiStatus: 409, description: "The task has already ended; `status` says how" }) {}

/** The host was revoked: its token cannot be rotated (register a new host instead). */
export class HostRevoked extends Schema.Error<HostRevoked>("HostRevoked")({
  error: Schema.String,
  code: Schema.tag("host_revoked"),
  hostId: Schema.String
}, { httpApiStatus: 409, description: "The host was revoked; register a new one" }) {}

export class NoActiveProfile extends Schema.Error<NoActiveProfile>("NoActiveProfile")({
  error: Schema.String,
  code: Schema.tag("no_active_profile")
}, { httpApiStatus: 503 }) {}

/**
 * CREDENTIAL_KEY is missing or malformed, or a stored credential was written
 * under a key the server does not hold. `error` names the variable to fix.
 */
export class CredentialUnavailable extends Schema.Error<CredentialUnavailable>("CredentialUnavailable")({
  error: Schema.String,
  code: Schema.tag("credential_unavailable")
}, { httpApiStatus: 503 }) {}

/** The planner's provider call failed (unreachable, an error status, an unreadable answer). */
export class PlannerProviderError extends Schema.Error<PlannerProviderError>("PlannerProviderError")({
  error: Schema.String,
  code: Schema.tag("provider_error"),
  /** Always sent by this server; optional so that a client still reads an older server's answer. */
  reason: Schema.optionalKey(ProviderFailureReason)
}, { httpApiStatus: 502, description: "The provider call failed (unreachable, an error status, an unreadable or too large answer); `reason` says how" }) {}

/** The provider answered without a tool call. */
export class NoToolCall extends Schema.Error<NoToolCall>("NoToolCall")({
  error: Schema.String,
  code: Schema.tag("no_tool_call")
}, { httpApiStatus: 502 }) {}

/** The provider answered with more than one tool call. */
export class MultipleToolCalls extends Schema.Error<MultipleToolCalls>("MultipleToolCalls")({
  error: Schema.String,
  code: Schema.tag("multiple_tool_calls")
}, { httpApiStatus: 502 }) {}

/** One tool call, but its name is not one of the request's tools, or its arguments are not a JSON object. */
export class InvalidToolCall extends Schema.Error<InvalidToolCall>("InvalidToolCall")({
  error: Schema.String,
  code: Schema.tag("invalid_tool_call")
}, { httpApiStatus: 502 }) {}

/** No answer within the active profile's timeout. */
export class ProviderTimeout extends Schema.Error<ProviderTimeout>("ProviderTimeout")({
  error: Schema.String,
  code: Schema.tag("provider_timeout")
}, { httpApiStatus: 504 }) {}
