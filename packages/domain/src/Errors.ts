/**
 * The errors a client can see. Each carries its HTTP status and a fixed
 * snake_case `code`, and none has a `_tag` on the wire: every error body is
 * `{ error, code, ...details }` (CONTRACT.md, Errors).
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
}, { httpApiStatus: 404, description: "No turn was ever persisted under this `chatId`" }) {}

export class TurnInFlight extends Schema.Error<TurnInFlight>("TurnInFlight")({
  error: Schema.String,
  code: Schema.tag("turn_in_flight"),
  chatId: Schema.String
}, { httpApiStatus: 409, description: "Another turn of this chat is in flight; retry once it has answered" }) {}

export class ProviderFailed extends Schema.Error<ProviderFailed>("ProviderFailed")({
  error: Schema.tag("LLM provider error"),
  code: Schema.tag("provider_error")
}, { httpApiStatus: 502, description: "The LLM provider failed or answered something unusable" }) {}

export class ProviderNotConfigured extends Schema.Error<ProviderNotConfigured>("ProviderNotConfigured")({
  error: Schema.String,
  code: Schema.tag("provider_not_configured"),
  missing: Schema.Array(Schema.String)
}, { httpApiStatus: 502, description: "The server lacks provider settings; `missing` lists the variables" }) {}

export class NotReady extends Schema.Error<NotReady>("NotReady")({
  error: Schema.String,
  code: Schema.tag("not_ready")
}, { httpApiStatus: 503, description: "The database does not answer or migrations are pending" }) {}

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
}, { httpApiStatus: 413, description: "The request body is larger than 10 MiB" }) {}

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
