/**
 * Turns whatever a typed-client call failed with into one human sentence, an
 * HTTP status when there was a response, and the server's error `code`.
 *
 * The server answers every error with `{ error, code, ...details }`
 * (docs/errors.md). Declared errors arrive decoded; undeclared statuses
 * (a proxy's 502 or 504, an HTML page…) arrive as an `HttpClientError` whose body is read
 * here, so the user sees the server's sentence rather than "StatusCode".
 */
import { Effect, Schema } from "effect"
import { HttpClientError } from "effect/http"

export interface ApiFailure {
  readonly message: string
  readonly status?: number
  readonly code?: string
  /** Why, when the server says (a `provider_error`'s `status_401`, `timeout`, …). */
  readonly reason?: string
}

const ErrorBody = Schema.Struct({
  error: Schema.String,
  code: Schema.optionalKey(Schema.String),
  reason: Schema.optionalKey(Schema.String)
})
const decodeErrorBody = Schema.decodeUnknownOption(ErrorBody)

const statusOfDeclared: Record<string, number> = {
  invalid_request: 400,
  unauthenticated: 401,
  forbidden: 403,
  chat_not_found: 404,
  host_not_found: 404,
  task_not_found: 404,
  profile_not_found: 404,
  turn_in_flight: 409,
  lease_lost: 409,
  task_cancelled: 409,
  task_terminal: 409,
  host_revoked: 409,
  profile_name_taken: 409,
  provider_error: 502,
  provider_not_configured: 502,
  no_tool_call: 502,
  multiple_tool_calls: 502,
  invalid_tool_call: 502,
  no_active_profile: 503,
  credential_unavailable: 503,
  not_ready: 503,
  provider_timeout: 504,
  // Answered by the server's HTTP layer, declared on every operation that can get them.
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  unsupported_media_type: 415,
  internal_error: 500,
  database_unavailable: 503
}

/** `LLM provider error (provider_error: status_401)`: the code, and the reason when there is one. */
const withCode = (message: string, code: string | undefined, reason?: string): string => {
  const unsaid = [code, reason].filter((s): s is string => s !== undefined && !message.includes(s))
  return unsaid.length === 0 ? message : `${message} (${unsaid.join(": ")})`
}

/** An error answer (status, its decoded JSON body or `undefined` when it was not JSON) as an `ApiFailure`. */
export const describeErrorResponse = (status: number, body: unknown): ApiFailure => {
  const decoded = decodeErrorBody(body)
  if (decoded._tag === "Some") {
    const { error: sentence, code, reason } = decoded.value
    return code === undefined
      ? { message: `${sentence} (HTTP ${status})`, status }
      : { message: withCode(sentence, code, reason), status, code, ...(reason === undefined ? {} : { reason }) }
  }
  return { message: `unexpected answer from the server: HTTP ${status}`, status }
}

/** The innermost `cause` message of an error chain (fetch's "fetch failed" hides the useful one). */
export const rootCause = (cause: unknown): string | undefined => {
  let current = cause
  let message: string | undefined
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    if (current.message !== "") message = current.message
    current = current.cause
  }
  return message
}

export const describeApiFailure = (error: unknown): Effect.Effect<ApiFailure> => {
  if (HttpClientError.isHttpClientError(error)) {
    const response = error.response
    if (response === undefined) {
      // Nothing answered. The reason names the method and URL; the root cause says why (ECONNREFUSED…).
      const root = rootCause(error.reason.cause)
      return Effect.succeed({ message: `cannot reach the server: ${error.message}${root === undefined ? "" : `: ${root}`}` })
    }
    return response.json.pipe(
      Effect.orElseSucceed(() => undefined),
      Effect.map((body) => describeErrorResponse(response.status, body))
    )
  }
  if (Schema.isSchemaError(error)) {
    return Effect.succeed({ message: `the request or its answer does not match the API: ${error.message}` })
  }
  // The domain's declared errors (InvalidRequest, TurnInFlight, ProviderFailed, …) carry `error` and `code`.
  if (typeof error === "object" && error !== null && "error" in error && typeof error.error === "string") {
    const code = "code" in error && typeof error.code === "string" ? error.code : undefined
    const reason = "reason" in error && typeof error.reason === "string" ? error.reason : undefined
    const status = code === undefined ? undefined : statusOfDeclared[code]
    return Effect.succeed({
      message: withCode(error.error, code, reason),
      ...(status === undefined ? {} : { status }),
      ...(code === undefined ? {} : { code }),
      ...(reason === undefined ? {} : { reason })
    })
  }
  return Effect.succeed({ message: describeUnknown(error) })
}


/** A readable sentence for any thrown or failed value. */
export const describeUnknown = (error: unknown): string => {
  if (typeof error === "string") return error
  if (error instanceof Error) return error.message !== "" ? error.message : error.name
  if (typeof error === "object" && error !== null) {
    if ("message" in error && typeof error.message === "string" && error.message !== "") return error.message
    if ("error" in error && typeof error.error === "string") return error.error
    try {
      return JSON.stringify(error)
    } catch {
      return String(error)
    }
  }
  return String(error)
}
