/**
 * A failed turn as the chat page says it, from the chat store's `failure` (the client's
 * `ApiFailure`): a replica at its limit of turns in flight (503 `overloaded`) is busy, not broken —
 * "Busy — retry in 3 s", nothing sent to the model, the message kept for Retry — and any other
 * failure is "The turn failed:" with the client's sentence (`LLM provider error (provider_error:
 * status_401)`, …).
 */
import { isOverloaded } from "@switchboard/client"
import type { ApiFailure } from "@switchboard/client"

export interface TurnFailureText {
  /** The banner's lead, in bold. */
  readonly title: string
  /** What follows it. */
  readonly detail: string
  /** The server was busy (503 `overloaded`): nothing failed, the turn was not started. */
  readonly busy: boolean
}

/** `Busy — retry in 3 s`; `Busy — retry shortly` when the server gave no wait. */
export const busyText = (retryAfter: number | undefined): string =>
  `Busy — retry ${retryAfter === undefined ? "shortly" : `in ${retryAfter} s`}`

export const turnFailureText = (failure: Pick<ApiFailure, "message" | "code" | "retryAfter">): TurnFailureText =>
  isOverloaded(failure)
    ? {
      title: busyText(failure.retryAfter),
      detail: "Switchboard is running as many turns as it takes at once; your message is kept.",
      busy: true
    }
    : { title: "The turn failed:", detail: failure.message, busy: false }
