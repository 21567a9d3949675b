/**
 * The errors a client can see. Each carries a fixed snake_case `code` and the
 * HTTP status `ErrorCodes.ts` gives that code, and none has a `_tag` on the
 * wire: every error body is `{ error, code, ...details }` (docs/errors.md).
 * In a program each has one all the same (a getter, never encoded), so a
 * client matches the typed client's failures by tag (`Effect.catchTag`).
 */
import { Schema } from "effect"
import { AgentBuiltIn, AgentExists, SubagentBuiltIn, SubagentInUse, SubagentNotFound } from "./AgentAdminErrors.ts"
import { ProviderFailureReason, statusOfCode } from "./ErrorCodes.ts"
import { CredentialUnavailable, Forbidden, HostNotFound, HostRevoked, InvalidToolCall, LeaseLost, MultipleToolCalls, NoActiveProfile, NoToolCall, PlannerProviderError, ProfileNameTaken, ProfileNotFound, ProviderTimeout, StepLimit, TaskCancelled, TaskNotFound, TaskTerminal } from "./PlannerErrors.ts"

// One face for the domain's errors: the codes, the planner's errors and the admin routes' errors about
// agents and sub-agent kinds live in their own modules.
export * from "./AgentAdminErrors.ts"
export * from "./ErrorCodes.ts"
export * from "./PlannerErrors.ts"

export class InvalidRequest extends Schema.Error<InvalidRequest>("InvalidRequest")({
  error: Schema.String,
  code: Schema.tag("invalid_request")
}, { httpApiStatus: statusOfCode.invalid_request, description: "The body, path or query does not match the schema; `error` names the offending path" }) {
  get _tag() {
    return "InvalidRequest" as const
  }
}

export class Unauthenticated extends Schema.Error<Unauthenticated>("Unauthenticated")({
  error: Schema.String,
  code: Schema.tag("unauthenticated")
}, { httpApiStatus: statusOfCode.unauthenticated, description: "`CHAT_TOKEN` is set and the request lacks `Authorization: Bearer $CHAT_TOKEN`" }) {
  get _tag() {
    return "Unauthenticated" as const
  }
}

export class ChatNotFound extends Schema.Error<ChatNotFound>("ChatNotFound")({
  error: Schema.String,
  code: Schema.tag("chat_not_found"),
  chatId: Schema.String
}, { httpApiStatus: statusOfCode.chat_not_found, description: "No turn was ever persisted under this `chatId`, or the operator deleted the chat" }) {
  get _tag() {
    return "ChatNotFound" as const
  }
}

export class TurnInFlight extends Schema.Error<TurnInFlight>("TurnInFlight")({
  error: Schema.String,
  code: Schema.tag("turn_in_flight"),
  chatId: Schema.String
}, { httpApiStatus: statusOfCode.turn_in_flight, description: "Another turn of this chat is in flight; retry once it has answered" }) {
  get _tag() {
    return "TurnInFlight" as const
  }
}

/** No approval of that id is asked for in the caller's chat. */
export class ApprovalNotFound extends Schema.Error<ApprovalNotFound>("ApprovalNotFound")({
  error: Schema.String,
  code: Schema.tag("approval_not_found"),
  approvalId: Schema.String
}, { httpApiStatus: statusOfCode.approval_not_found, description: "The chat asks for no approval of this id" }) {
  get _tag() {
    return "ApprovalNotFound" as const
  }
}

/** The approval was decided already (by another request, another tab, a new message of the user's): the first decision holds. */
export class ApprovalDecided extends Schema.Error<ApprovalDecided>("ApprovalDecided")({
  error: Schema.String,
  code: Schema.tag("approval_decided"),
  approvalId: Schema.String
}, { httpApiStatus: statusOfCode.approval_decided, description: "The approval was decided already: the first decision holds" }) {
  get _tag() {
    return "ApprovalDecided" as const
  }
}

/**
 * Too many requests of one caller within the last minute (`CHAT_RPM`,
 * `PLANNER_HOST_RPM`; docs/errors.md): nothing was done. `retryAfter` is the
 * number of seconds after which the next one is accepted, also sent as
 * `Retry-After`.
 */
export class RateLimited extends Schema.Error<RateLimited>("RateLimited")({
  error: Schema.String,
  code: Schema.tag("rate_limited"),
  retryAfter: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))
}, {
  httpApiStatus: statusOfCode.rate_limited,
  description: "Over the rate limit (`CHAT_RPM` per bearer token or client address for chat turns, " +
    "`PLANNER_HOST_RPM` per host for planner decisions): nothing was done; retry after `retryAfter` seconds " +
    "(also sent as `Retry-After`)"
}) {
  get _tag() {
    return "RateLimited" as const
  }
}

/**
 * This replica runs as many turns (or planner decisions) as it admits at once
 * (`MAX_CONCURRENT_TURNS`, `PLANNER_MAX_CONCURRENT_DECISIONS`; docs/errors.md):
 * the request was refused at once, nothing was stored or sent to a provider.
 * Retry after `retryAfter` seconds (also sent as `Retry-After`), here or on
 * another replica.
 */
export class Overloaded extends Schema.Error<Overloaded>("Overloaded")({
  error: Schema.String,
  code: Schema.tag("overloaded"),
  retryAfter: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))
}, {
  httpApiStatus: statusOfCode.overloaded,
  description: "The replica is at its limit of turns in flight (`MAX_CONCURRENT_TURNS`) or of planner decisions in " +
    "flight (`PLANNER_MAX_CONCURRENT_DECISIONS`): refused at once, nothing was done; retry after `retryAfter` " +
    "seconds (also sent as `Retry-After`)"
}) {
  get _tag() {
    return "Overloaded" as const
  }
}


export class ProviderFailed extends Schema.Error<ProviderFailed>("ProviderFailed")({
  error: Schema.tag("LLM provider error"),
  code: Schema.tag("provider_error"),
  /** Always sent by this server; optional so that a client still reads an older server's answer. */
  reason: Schema.optionalKey(ProviderFailureReason)
}, { httpApiStatus: statusOfCode.provider_error, description: "The LLM provider failed or answered something unusable; `reason` says how" }) {
  get _tag() {
    return "ProviderFailed" as const
  }
}

export class ProviderNotConfigured extends Schema.Error<ProviderNotConfigured>("ProviderNotConfigured")({
  error: Schema.String,
  code: Schema.tag("provider_not_configured"),
  missing: Schema.Array(Schema.String)
}, { httpApiStatus: statusOfCode.provider_not_configured, description: "The server lacks provider settings; `missing` lists the variables" }) {
  get _tag() {
    return "ProviderNotConfigured" as const
  }
}

/**
 * Readiness (`/readyz`), and every route while the server is still starting
 * (its database and migrations not up yet), with `Retry-After`.
 */
export class NotReady extends Schema.Error<NotReady>("NotReady")({
  error: Schema.String,
  code: Schema.tag("not_ready")
}, { httpApiStatus: statusOfCode.not_ready, description: "Starting (every route, with `Retry-After`), or the database does not answer or migrations are pending (`/readyz`)" }) {
  get _tag() {
    return "NotReady" as const
  }
}

/** A turn carrying more messages than the server takes in one request (`CHAT_MAX_MESSAGES`). */
export class TooManyMessages extends Schema.Error<TooManyMessages>("TooManyMessages")({
  error: Schema.String,
  code: Schema.tag("too_many_messages"),
  limit: Schema.Int
}, { httpApiStatus: statusOfCode.too_many_messages, description: "More messages than `CHAT_MAX_MESSAGES` (default 1000) in one turn; `limit` is the limit" }) {
  get _tag() {
    return "TooManyMessages" as const
  }
}

/** A multipart body with more parts than the route takes; refused before the rest is read. */
export class TooManyParts extends Schema.Error<TooManyParts>("TooManyParts")({
  error: Schema.String,
  code: Schema.tag("too_many_parts"),
  limit: Schema.Int
}, { httpApiStatus: statusOfCode.too_many_parts, description: "More multipart parts than the operation takes (`limit`)" }) {
  get _tag() {
    return "TooManyParts" as const
  }
}

// The errors below are answered by the server's HTTP layer (packages/server/src/http/JsonErrors.ts)
// before, around or instead of a handler. They are declared on the operations anyway, so the
// OpenAPI document and the typed clients know every answer a route can give.

export class NotFound extends Schema.Error<NotFound>("NotFound")({
  error: Schema.String,
  code: Schema.tag("not_found")
}, { httpApiStatus: statusOfCode.not_found, description: "No such route (for instance a path parameter the router cannot match)" }) {
  get _tag() {
    return "NotFound" as const
  }
}

export class MethodNotAllowed extends Schema.Error<MethodNotAllowed>("MethodNotAllowed")({
  error: Schema.String,
  code: Schema.tag("method_not_allowed")
}, { httpApiStatus: statusOfCode.method_not_allowed, description: "The path exists with other methods, listed in `Allow`" }) {
  get _tag() {
    return "MethodNotAllowed" as const
  }
}

export class PayloadTooLarge extends Schema.Error<PayloadTooLarge>("PayloadTooLarge")({
  error: Schema.String,
  code: Schema.tag("payload_too_large")
}, {
  httpApiStatus: statusOfCode.payload_too_large,
  description: "The request body is larger than 10 MiB, or one value in it larger than the server stores " +
    "(4 MiB of JSON: a chat message, a planner prompt); `error` names it"
}) {
  get _tag() {
    return "PayloadTooLarge" as const
  }
}

export class UnsupportedMediaType extends Schema.Error<UnsupportedMediaType>("UnsupportedMediaType")({
  error: Schema.String,
  code: Schema.tag("unsupported_media_type")
}, { httpApiStatus: statusOfCode.unsupported_media_type, description: "A body with another Content-Type than the operation takes" }) {
  get _tag() {
    return "UnsupportedMediaType" as const
  }
}

export class InternalError extends Schema.Error<InternalError>("InternalError")({
  error: Schema.String,
  code: Schema.tag("internal_error")
}, { httpApiStatus: statusOfCode.internal_error, description: "An unexpected server failure (logged; never a stack trace on the wire)" }) {
  get _tag() {
    return "InternalError" as const
  }
}

export class DatabaseUnavailable extends Schema.Error<DatabaseUnavailable>("DatabaseUnavailable")({
  error: Schema.String,
  code: Schema.tag("database_unavailable")
}, { httpApiStatus: statusOfCode.database_unavailable, description: "The database cannot be reached; retry after `Retry-After` seconds" }) {
  get _tag() {
    return "DatabaseUnavailable" as const
  }
}

/** What any operation can answer, whatever it does. */
export const anyRouteErrors = [MethodNotAllowed, InternalError] as const

/** What an operation that reads a request body can answer about it. */
export const bodyErrors = [InvalidRequest, PayloadTooLarge, UnsupportedMediaType] as const

export class AgentNotFound extends Schema.Error<AgentNotFound>("AgentNotFound")({
  error: Schema.String,
  code: Schema.tag("agent_not_found"),
  agent: Schema.String
}, { httpApiStatus: statusOfCode.agent_not_found, description: "No agent of that name (built in or stored)" }) {
  get _tag() {
    return "AgentNotFound" as const
  }
}

export class AgentMismatch extends Schema.Error<AgentMismatch>("AgentMismatch")({
  error: Schema.String,
  code: Schema.tag("agent_mismatch"),
  /** The agent the chat keeps (the one of its first turn). */
  agent: Schema.String
}, { httpApiStatus: statusOfCode.agent_mismatch, description: "The chat keeps the agent of its first turn; this turn named another" }) {
  get _tag() {
    return "AgentMismatch" as const
  }
}

/**
 * A chat whose stored transcript reached its limit (`CHAT_TRANSCRIPT_MAX_MESSAGES`,
 * `CHAT_TRANSCRIPT_MAX_BYTES`): it takes no more client turns; its user starts another chat.
 */
export class ChatFull extends Schema.Error<ChatFull>("ChatFull")({
  error: Schema.String,
  code: Schema.tag("chat_full"),
  chatId: Schema.String,
  /** What the transcript holds: its messages and the bytes of their JSON. */
  messages: Schema.Int,
  bytes: Schema.Int
}, {
  httpApiStatus: statusOfCode.chat_full,
  description: "The chat's stored transcript holds `CHAT_TRANSCRIPT_MAX_MESSAGES` messages or `CHAT_TRANSCRIPT_MAX_BYTES` bytes: " +
    "it takes no more turns (start another chat); nothing of the turn was stored"
}) {
  get _tag() {
    return "ChatFull" as const
  }
}

/**
 * A host's planner tokens (docs/usage.md), or a user's tokens (`USER_DAILY_TOKENS`, docs/users.md), over
 * the last 24 hours reached the budget: refused before any provider call, with `Retry-After` (the seconds until the window's oldest hour leaves it).
 */
export class BudgetExceeded extends Schema.Error<BudgetExceeded>("BudgetExceeded")({
  error: Schema.String,
  code: Schema.tag("budget_exceeded"),
  /** The budget of tokens per 24 hours: the host's (a planner decision), the user's (a chat turn, `USER_DAILY_TOKENS`). */
  limit: Schema.Number,
  /** Its tokens in the window. */
  used: Schema.Number,
  /** Seconds until the window's oldest counted hour leaves it (the `Retry-After` header too). */
  retryAfter: Schema.Number
}, { httpApiStatus: statusOfCode.budget_exceeded, description: "The tokens over the last 24 hours reached the budget — the host's planner tokens (a decision), the user's (a chat turn, `USER_DAILY_TOKENS`); retry after `retryAfter` seconds" }) {
  get _tag() {
    return "BudgetExceeded" as const
  }
}

/** Every declared error, for a client reading an answer its operation does not declare (by `code`). */
export const declaredErrors = [
  InvalidRequest,
  Unauthenticated,
  ChatNotFound,
  TurnInFlight,
  RateLimited,
  Overloaded,
  ProviderFailed,
  ProviderNotConfigured,
  NotReady,
  TooManyMessages,
  TooManyParts,
  NotFound,
  MethodNotAllowed,
  PayloadTooLarge,
  UnsupportedMediaType,
  InternalError,
  DatabaseUnavailable,
  Forbidden,
  HostNotFound,
  TaskNotFound,
  ProfileNotFound,
  ProfileNameTaken,
  LeaseLost,
  TaskCancelled,
  TaskTerminal,
  HostRevoked,
  NoActiveProfile,
  CredentialUnavailable,
  PlannerProviderError,
  NoToolCall,
  MultipleToolCalls,
  InvalidToolCall,
  ProviderTimeout,
  AgentNotFound,
  AgentMismatch,
  ChatFull,
  StepLimit,
  AgentExists,
  AgentBuiltIn,
  BudgetExceeded,
  ApprovalNotFound,
  ApprovalDecided,
  SubagentNotFound,
  SubagentBuiltIn,
  SubagentInUse
] as const
export type DeclaredError = InstanceType<(typeof declaredErrors)[number]>
