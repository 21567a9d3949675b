/**
 * What a typed-client call fails with, as one union a client matches by tag
 * (`ApiError`), and as one human sentence with the HTTP status and the
 * server's error `code` (`ApiFailure`).
 *
 * The server answers every error with `{ error, code, ...details }`
 * (docs/errors.md). Each code is a domain error class (`ChatNotFound`,
 * `TurnInFlight`, `ProviderFailed`, …, tagged by name): a declared one arrives
 * decoded, and an undeclared status whose body is a known code (a `not_ready`
 * while the server starts) is decoded here into its class too. What is left
 * is the transport's: nothing answered (`ApiUnreachable`), an answer that is
 * not the contract's (`ApiUnexpectedAnswer`: a proxy's 502 or 504, an HTML
 * page, a code this client does not know), or a request or answer that does
 * not match the API's schemas (`ApiContractMismatch`). A request the client
 * could not sign, because the caller's `getToken` rejected, was never sent
 * (`ApiTokenUnavailable`).
 *
 * A replica at its admission limit answers 503 `overloaded` with `retryAfter`
 * (and `Retry-After`): it is described as busy, not as a failure of the
 * model — `Switchboard is busy (too many turns at once); retry in 3 s` — and
 * its `ApiFailure` carries `retryAfter`, from the body or, when the body
 * lacks it, from the `Retry-After` header.
 */
import { declaredErrors, statusOf } from "@switchboard/domain"
import type { DeclaredError } from "@switchboard/domain"
import { Data, Effect, Option, Schema } from "effect"
import { HttpClientError } from "effect/http"

/** Nothing answered: the connection was refused, the name did not resolve, … */
export class ApiUnreachable extends Data.TaggedError("ApiUnreachable")<{
  readonly message: string
  readonly cause: unknown
}> {}

/** The caller's `getToken` rejected (or gave no string): the request was not sent. */
export class ApiTokenUnavailable extends Data.TaggedError("ApiTokenUnavailable")<{
  readonly message: string
  readonly cause: unknown
}> {}

/** An answer the API does not declare: a status without the contract's body, or a code this client does not know. */
export class ApiUnexpectedAnswer extends Data.TaggedError("ApiUnexpectedAnswer")<{
  readonly status: number
  /** The body's `error`, `code` and `reason` when it had the contract's shape. */
  readonly error?: string
  readonly code?: string
  readonly reason?: string
  /** Seconds to wait, when the body's `retryAfter` or the `Retry-After` header said. */
  readonly retryAfter?: number
}> {}

/** The request or its answer does not match the API's schemas. */
export class ApiContractMismatch extends Data.TaggedError("ApiContractMismatch")<{
  readonly cause: Schema.SchemaError
}> {}

/** Every error class this client decodes by its code: the domain's `declaredErrors`. */
export type KnownError = DeclaredError
const knownErrors = declaredErrors

/** Every way a typed-client call can fail, by tag: each error code's class, and the transport's failures. */
export type ApiError = KnownError | ApiUnreachable | ApiUnexpectedAnswer | ApiContractMismatch | ApiTokenUnavailable

/** A failure described for a person: a sentence, the HTTP status when there was an answer, the server's code. */
export interface ApiFailure {
  readonly message: string
  readonly status?: number
  readonly code?: string
  /** Why, when the server says (a `provider_error`'s `status_401`, `timeout`, …). */
  readonly reason?: string
  /**
   * Seconds to wait before asking again, when the server says: a 429's or a 503 `overloaded`'s
   * `retryAfter` (the `Retry-After` header when the body lacks it).
   */
  readonly retryAfter?: number
}

/** What a client shows for a 503 `overloaded`: the replica is busy, nothing was done. */
export const busyMessage = (retryAfter: number | undefined): string =>
  `Switchboard is busy (too many turns at once); retry ${retryAfter === undefined ? "shortly" : `in ${retryAfter} s`}`

/** Whether a failure is a replica's 503 `overloaded` (retry after its `retryAfter`: nothing was done). */
export const isOverloaded = (failure: { readonly code?: string | undefined }): boolean => failure.code === "overloaded"

/**
 * A `Retry-After` header's seconds: delta-seconds (`3`), or an HTTP date (the seconds until it, at
 * least 1); `undefined` when there is none or it is neither.
 */
export const parseRetryAfter = (header: string | null | undefined, now: number = Date.now()): number | undefined => {
  const value = header?.trim() ?? ""
  if (/^\d+$/.test(value)) {
    const seconds = Number(value)
    return Number.isSafeInteger(seconds) ? Math.max(1, seconds) : undefined
  }
  // An HTTP date names its day or month (`Wed, 21 Oct 2015 07:28:00 GMT`): `-3` is no date.
  const date = /[A-Za-z]/.test(value) ? Date.parse(value) : NaN
  return Number.isNaN(date) ? undefined : Math.max(1, Math.ceil((date - now) / 1000))
}

const ErrorBody = Schema.Struct({
  error: Schema.String,
  code: Schema.optionalKey(Schema.String),
  reason: Schema.optionalKey(Schema.String)
})
const decodeErrorBody = Schema.decodeUnknownOption(ErrorBody)

const decoders = knownErrors.map((known) => Schema.decodeUnknownOption(known))

const isDeclared = (error: unknown): error is KnownError => knownErrors.some((known) => error instanceof known)

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A body's `retryAfter` when it is a whole number of seconds, at least 1. */
const retryAfterOf = (body: unknown): number | undefined => {
  const value = isObject(body) ? body["retryAfter"] : undefined
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 1 ? value : undefined
}

/**
 * An error answer (its status, its JSON body or `undefined` when it had none, and its `Retry-After`
 * header when it had one) as the union's member. A body without `retryAfter` gets the header's.
 */
export const answerError = (status: number, body: unknown, retryAfterHeader?: string | null): KnownError | ApiUnexpectedAnswer => {
  const header = retryAfterOf(body) === undefined ? parseRetryAfter(retryAfterHeader) : undefined
  const answered = header !== undefined && isObject(body) ? { ...body, retryAfter: header } : body
  for (const decode of decoders) {
    const declared = decode(answered)
    if (Option.isSome(declared)) return declared.value
  }
  const decoded = decodeErrorBody(answered)
  const retryAfter = retryAfterOf(answered) ?? header
  return new ApiUnexpectedAnswer({
    status,
    ...(Option.isSome(decoded) ? decoded.value : {}),
    ...(retryAfter === undefined ? {} : { retryAfter })
  })
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

/** Whatever a typed-client call failed with, as the union's member. */
export const toApiError = (
  error: KnownError | HttpClientError.HttpClientError | Schema.SchemaError | ApiError
): Effect.Effect<ApiError> => {
  if (HttpClientError.isHttpClientError(error)) {
    const response = error.response
    // The typed client carries a `getToken` failure as its transport's cause (`ApiClient`).
    if (error.reason.cause instanceof ApiTokenUnavailable) return Effect.succeed(error.reason.cause)
    if (response === undefined) {
      // The reason names the method and URL; the root cause says why (ECONNREFUSED…).
      const root = rootCause(error.reason.cause)
      return Effect.succeed(new ApiUnreachable({ message: `${error.message}${root === undefined ? "" : `: ${root}`}`, cause: error }))
    }
    return response.json.pipe(
      Effect.orElseSucceed(() => undefined),
      Effect.map((body) => answerError(response.status, body, response.headers["retry-after"]))
    )
  }
  if (Schema.isSchemaError(error)) return Effect.succeed(new ApiContractMismatch({ cause: error }))
  return Effect.succeed(error)
}

/** A typed-client call whose failure is an `ApiError`, to match by tag. */
export const apiErrors = <A, R>(
  effect: Effect.Effect<A, KnownError | HttpClientError.HttpClientError | Schema.SchemaError, R>
): Effect.Effect<A, ApiError, R> => Effect.catch(effect, (error) => Effect.flatMap(toApiError(error), Effect.fail))

/** `LLM provider error (provider_error: status_401)`: the code, and the reason when there is one. */
const withCode = (message: string, code: string | undefined, reason?: string): string => {
  const unsaid = [code, reason].filter((s): s is string => s !== undefined && !message.includes(s))
  return unsaid.length === 0 ? message : `${message} (${unsaid.join(": ")})`
}

/** A coded error described: the sentence with its code and reason, and the status when known. */
const coded = (sentence: string, code: string | undefined, reason: string | undefined, status: number | undefined): ApiFailure => ({
  message: withCode(sentence, code, reason),
  ...(status === undefined ? {} : { status }),
  ...(code === undefined ? {} : { code }),
  ...(reason === undefined ? {} : { reason })
})

/** A 503 `overloaded` described: busy, with the wait when the server gave one. */
const busy = (retryAfter: number | undefined, status: number | undefined): ApiFailure => ({
  message: busyMessage(retryAfter),
  ...(status === undefined ? {} : { status }),
  code: "overloaded",
  ...(retryAfter === undefined ? {} : { retryAfter })
})

/** An `ApiError` described for a person. */
export const describeApiError = (error: ApiError): ApiFailure => {
  switch (error._tag) {
    case "ApiUnreachable":
      return { message: `cannot reach the server: ${error.message}` }
    case "ApiTokenUnavailable":
      return { message: error.message }
    case "ApiContractMismatch":
      return { message: `the request or its answer does not match the API: ${error.cause.message}` }
    case "ApiUnexpectedAnswer": {
      const { code, reason, retryAfter, status } = error
      // `overloaded` without a valid `retryAfter` (nor a `Retry-After`): busy all the same.
      if (code === "overloaded") return busy(retryAfter, status)
      if (error.error === undefined) return { message: `unexpected answer from the server: HTTP ${status}`, status }
      const failure = code === undefined ? { message: `${error.error} (HTTP ${status})`, status } : coded(error.error, code, reason, status)
      return retryAfter === undefined ? failure : { ...failure, retryAfter }
    }
    case "Overloaded":
      return busy(error.retryAfter, statusOf(error.code))
    default: {
      const failure = coded(error.error, error.code, "reason" in error ? error.reason : undefined, statusOf(error.code))
      return "retryAfter" in error ? { ...failure, retryAfter: error.retryAfter } : failure
    }
  }
}

/**
 * An error answer (status, its decoded JSON body or `undefined` when it was not JSON, its
 * `Retry-After` header when it had one) as an `ApiFailure`.
 */
export const describeErrorResponse = (status: number, body: unknown, retryAfterHeader?: string | null): ApiFailure => ({
  ...describeApiError(answerError(status, body, retryAfterHeader)),
  status
})

const isApiError = (error: unknown): error is KnownError | HttpClientError.HttpClientError | Schema.SchemaError | ApiError =>
  HttpClientError.isHttpClientError(error) || Schema.isSchemaError(error) || isDeclared(error) ||
  error instanceof ApiUnreachable || error instanceof ApiUnexpectedAnswer || error instanceof ApiContractMismatch ||
  error instanceof ApiTokenUnavailable

/** Whatever a typed-client call (or anything else) failed with, described for a person. */
export const describeApiFailure = (error: unknown): Effect.Effect<ApiFailure> => {
  if (isApiError(error)) return Effect.map(toApiError(error), describeApiError)
  // Shaped like an error body without being one of the classes (a fake's, a wrapper's): read it as one.
  const body = decodeErrorBody(error)
  if (Option.isNone(body)) return Effect.succeed({ message: describeUnknown(error) })
  const { code, error: sentence, reason } = body.value
  const status = code === undefined ? undefined : statusOf(code)
  if (code === "overloaded") return Effect.succeed(busy(retryAfterOf(error), status))
  return Effect.succeed(coded(sentence, code, reason, status))
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
