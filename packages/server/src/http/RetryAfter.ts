/**
 * A 429 answered with `Retry-After` (RFC 9110, 10.2.3) as well as its body's
 * `retryAfter`: the declared error's body, as the HttpApi would encode it,
 * with the header the error schema cannot carry.
 */
import { statusOfCode } from "@switchboard/domain"
import type { ErrorCode } from "@switchboard/domain"
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"

/** The fields of an error that says when to retry, as its wire body has them. */
export interface RetryLater {
  readonly _tag: string
  readonly error: string
  readonly code: ErrorCode
  readonly retryAfter: number
}

export const retryAfterResponse = (failure: RetryLater, details: Record<string, unknown> = {}) =>
  HttpServerResponse.jsonUnsafe(
    { error: failure.error, code: failure.code, ...details, retryAfter: failure.retryAfter },
    { status: statusOfCode[failure.code], headers: { "retry-after": String(failure.retryAfter) } }
  )

/** `effect`, its failures tagged `tag` answered with their `Retry-After`. */
export const answerRetryLater = <T extends string>(tag: T) =>
<A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchIf(
    effect,
    (e): e is Extract<E, { readonly _tag: T }> & RetryLater =>
      typeof e === "object" && e !== null && (e as { _tag?: unknown })._tag === tag,
    (e) => Effect.succeed(retryAfterResponse(e, detailsOf(e)))
  )

const detailsOf = (e: object): Record<string, unknown> => {
  const details: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(e)) {
    if (key !== "error" && key !== "code" && key !== "retryAfter" && key !== "_tag") details[key] = value
  }
  return details
}
