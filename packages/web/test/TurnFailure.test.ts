/**
 * How the chat page says a failed turn (no browser: the banner's text is `turnFailureText` of the
 * chat store's `failure`): a busy server's 503 `overloaded`, as the client describes it, is
 * "Busy — retry in N s", not a failure of the model; any other failure keeps the client's sentence.
 */
import { describeErrorResponse } from "@switchboard/client"
import { assert, describe, it } from "vitest"
import { busyText, turnFailureText } from "../src/chat/TurnFailure.ts"

describe("the chat page's failed turn", () => {
  it("a busy server (503 overloaded) is Busy — retry in N s, from the body's retryAfter or the Retry-After header", () => {
    const sentence = "Too many turns in flight on this replica (MAX_CONCURRENT_TURNS=2); retry in 3 s"
    const busy = turnFailureText(describeErrorResponse(503, { error: sentence, code: "overloaded", retryAfter: 3 }, "3"))
    assert.strictEqual(busy.title, "Busy — retry in 3 s")
    assert.isTrue(busy.busy)
    assert.notInclude(`${busy.title} ${busy.detail}`, "provider")
    assert.notInclude(`${busy.title} ${busy.detail}`, "failed")

    const fromHeader = turnFailureText(describeErrorResponse(503, { error: sentence, code: "overloaded" }, "8"))
    assert.strictEqual(fromHeader.title, "Busy — retry in 8 s")

    const noWait = turnFailureText(describeErrorResponse(503, { error: sentence, code: "overloaded" }))
    assert.strictEqual(noWait.title, "Busy — retry shortly")
    assert.strictEqual(busyText(1), "Busy — retry in 1 s")
  })

  it("any other failure is The turn failed: with the client's sentence", () => {
    const provider = turnFailureText(describeErrorResponse(502, { error: "LLM provider error", code: "provider_error", reason: "status_401" }))
    assert.deepStrictEqual(provider, {
      title: "The turn failed:",
      detail: "LLM provider error (provider_error: status_401)",
      busy: false
    })
    // A sentence without a code (an error chunk, a stream cut short) is shown as it is.
    assert.deepStrictEqual(turnFailureText({ message: "the answer's stream ended before the turn finished" }), {
      title: "The turn failed:",
      detail: "the answer's stream ended before the turn finished",
      busy: false
    })
  })
})
