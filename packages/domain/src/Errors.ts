/**
 * The errors a client can see. Each carries its HTTP status and a fixed
 * snake_case `code`, and none has a `_tag` on the wire: every error body is
 * `{ error, code, ...details }` (CONTRACT.md, Errors).
 */
import { Schema } from "effect"

export class InvalidRequest extends Schema.Error<InvalidRequest>("InvalidRequest")({
  error: Schema.String,
  code: Schema.tag("invalid_request")
}, { httpApiStatus: 400 }) {}

export class Unauthenticated extends Schema.Error<Unauthenticated>("Unauthenticated")({
  error: Schema.String,
  code: Schema.tag("unauthenticated")
}, { httpApiStatus: 401 }) {}

export class ChatNotFound extends Schema.Error<ChatNotFound>("ChatNotFound")({
  error: Schema.String,
  code: Schema.tag("chat_not_found"),
  chatId: Schema.String
}, { httpApiStatus: 404 }) {}

export class TurnInFlight extends Schema.Error<TurnInFlight>("TurnInFlight")({
  error: Schema.String,
  code: Schema.tag("turn_in_flight"),
  chatId: Schema.String
}, { httpApiStatus: 409 }) {}

export class ProviderFailed extends Schema.Error<ProviderFailed>("ProviderFailed")({
  error: Schema.tag("LLM provider error"),
  code: Schema.tag("provider_error")
}, { httpApiStatus: 502 }) {}

export class ProviderNotConfigured extends Schema.Error<ProviderNotConfigured>("ProviderNotConfigured")({
  error: Schema.String,
  code: Schema.tag("provider_not_configured"),
  missing: Schema.Array(Schema.String)
}, { httpApiStatus: 502 }) {}

/**
 * Readiness (`/readyz`), and every route while the server is still starting
 * (its database and migrations not up yet), with `Retry-After`.
 */
export class NotReady extends Schema.Error<NotReady>("NotReady")({
  error: Schema.String,
  code: Schema.tag("not_ready")
}, { httpApiStatus: 503 }) {}

/** A turn carrying more messages than the server takes in one request (`CHAT_MAX_MESSAGES`). */
export class TooManyMessages extends Schema.Error<TooManyMessages>("TooManyMessages")({
  error: Schema.String,
  code: Schema.tag("too_many_messages"),
  limit: Schema.Int
}, { httpApiStatus: 400 }) {}

/** A multipart body with more parts than the route takes; refused before the rest is read. */
export class TooManyParts extends Schema.Error<TooManyParts>("TooManyParts")({
  error: Schema.String,
  code: Schema.tag("too_many_parts"),
  limit: Schema.Int
}, { httpApiStatus: 400 }) {}
