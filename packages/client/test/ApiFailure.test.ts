/**
 * The typed client's failures as one union matched by tag: each error code
 * its domain class (declared by the operation or not), and the transport's
 * failures; and each described with the status of the domain's one
 * code→status table.
 */
import { assert, describe, it } from "@effect/vitest"
import { statusOfCode, TooManyMessages } from "@switchboard/domain"
import type { ChatRequest } from "@switchboard/domain"
import { Effect } from "effect"
import { ApiClient } from "../src/api/ApiClient.ts"
import { apiErrors, describeApiError, describeApiFailure, describeErrorResponse, parseRetryAfter } from "../src/api/ApiFailure.ts"
import type { ApiError } from "../src/api/ApiFailure.ts"
import { startFakeServer } from "./support/FakeServer.ts"
import type { Reply } from "./support/FakeServer.ts"

const turn: ChatRequest = { messages: [{ id: "u1", role: "user", content: "hi", timestamp: 1 }] }

/** What one chat turn against a server answering `reply` fails with. */
const failureOf = (reply: Reply) =>
  Effect.gen(function*() {
    const server = yield* startFakeServer(() => reply)
    return yield* failureAt(server.url)
  })

const failureAt = (baseUrl: string) =>
  Effect.gen(function*() {
    const client = yield* ApiClient
    return yield* apiErrors(client.chat.chat({ payload: turn })).pipe(Effect.flip)
  }).pipe(Effect.provide(ApiClient.layer({ baseUrl })))

describe("ApiError", () => {
  it.effect("a declared error arrives as its class, matched by tag", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer(() => ({
        status: 409,
        json: { error: "Another turn of chat c1 is in flight", code: "turn_in_flight", chatId: "c1" }
      }))
      const client = yield* ApiClient.pipe(Effect.provide(ApiClient.layer({ baseUrl: server.url })))
      const caught = yield* apiErrors(client.chat.chat({ payload: { ...turn, chatId: "c1" } })).pipe(
        Effect.as("answered"),
        Effect.catchTag("TurnInFlight", (e) => Effect.succeed(`in flight: ${e.chatId}`))
      )
      assert.strictEqual(caught, "in flight: c1")
    }))

  it.effect("an undeclared status with a known code is its class too; an unknown code or no JSON is an unexpected answer", () =>
    Effect.gen(function*() {
      const starting = yield* failureOf({ status: 503, json: { error: "The server is starting; retry shortly", code: "not_ready" } })
      assert.strictEqual(starting._tag, "NotReady")
      assert.deepStrictEqual(describeApiError(starting), {
        message: "The server is starting; retry shortly (not_ready)",
        status: 503,
        code: "not_ready"
      })

      const newer = yield* failureOf({ status: 429, json: { error: "Slow down", code: "rate_limited" } })
      assert.strictEqual(newer._tag, "ApiUnexpectedAnswer")
      assert.deepStrictEqual(describeApiError(newer), { message: "Slow down (rate_limited)", status: 429, code: "rate_limited" })

      const proxy = yield* failureOf({ status: 504, body: "<html>Gateway Timeout</html>", headers: { "content-type": "text/html" } })
      assert.strictEqual(proxy._tag, "ApiUnexpectedAnswer")
      assert.deepStrictEqual(describeApiError(proxy), { message: "unexpected answer from the server: HTTP 504", status: 504 })
    }))

  it.effect("nothing answering is ApiUnreachable; an answer off the schema is ApiContractMismatch", () =>
    Effect.gen(function*() {
      const closed = yield* failureAt("http://127.0.0.1:9")
      assert.strictEqual(closed._tag, "ApiUnreachable")
      assert.match(describeApiError(closed).message, /^cannot reach the server: /)

      const wrong = yield* failureOf({ status: 200, json: { unexpected: true } })
      assert.strictEqual(wrong._tag, "ApiContractMismatch")
      assert.match(describeApiError(wrong).message, /^the request or its answer does not match the API: /)
    }))

  it.effect("every code is described with the status of the domain's table, the ones an old client lacked included", () =>
    Effect.gen(function*() {
      const tooMany = new TooManyMessages({ error: "More than 3 messages", limit: 3 })
      const described = yield* describeApiFailure(tooMany)
      assert.deepStrictEqual(described, { message: "More than 3 messages (too_many_messages)", status: 400, code: "too_many_messages" })
      const tags: ReadonlyArray<ApiError["_tag"]> = ["TooManyMessages", "ApiUnreachable", "ApiUnexpectedAnswer", "ApiContractMismatch"]
      assert.include(tags, tooMany._tag)
      assert.strictEqual(statusOfCode.too_many_parts, 400)
    }))

  it.effect("a busy replica's 503 overloaded is busy, not a failure: its retryAfter from the body, else from Retry-After", () =>
    Effect.gen(function*() {
      const sentence = "Too many turns in flight on this replica (MAX_CONCURRENT_TURNS=2); retry in 3 s"
      const overloaded = yield* failureOf({
        status: 503,
        json: { error: sentence, code: "overloaded", retryAfter: 3 },
        headers: { "retry-after": "3" }
      })
      assert.strictEqual(overloaded._tag, "Overloaded")
      assert.deepStrictEqual(describeApiError(overloaded), {
        message: "Switchboard is busy (too many turns at once); retry in 3 s",
        status: 503,
        code: "overloaded",
        retryAfter: 3
      })

      // A body without its retryAfter: the header's.
      const headerOnly = yield* failureOf({ status: 503, json: { error: sentence, code: "overloaded" }, headers: { "retry-after": "7" } })
      assert.strictEqual(headerOnly._tag, "Overloaded")
      assert.strictEqual(describeApiError(headerOnly).message, "Switchboard is busy (too many turns at once); retry in 7 s")
      assert.strictEqual(describeApiError(headerOnly).retryAfter, 7)

      // Neither: still busy, without a figure.
      const neither = yield* failureOf({ status: 503, json: { error: sentence, code: "overloaded" } })
      assert.strictEqual(neither._tag, "ApiUnexpectedAnswer")
      assert.deepStrictEqual(describeApiError(neither), {
        message: "Switchboard is busy (too many turns at once); retry shortly",
        status: 503,
        code: "overloaded"
      })

      // The fetch paths' reading of an answer, and an error body that is not one of the classes.
      assert.deepStrictEqual(describeErrorResponse(503, { error: sentence, code: "overloaded" }, "12"), {
        message: "Switchboard is busy (too many turns at once); retry in 12 s",
        status: 503,
        code: "overloaded",
        retryAfter: 12
      })
      assert.strictEqual(
        (yield* describeApiFailure({ error: sentence, code: "overloaded", retryAfter: 4 })).message,
        "Switchboard is busy (too many turns at once); retry in 4 s"
      )
      // Another code keeps its own sentence, with the header's wait when its body had none.
      assert.deepStrictEqual(describeErrorResponse(503, { error: "Database unreachable", code: "database_unavailable" }, "2"), {
        message: "Database unreachable (database_unavailable)",
        status: 503,
        code: "database_unavailable"
      })
    }))

  it("Retry-After: delta-seconds or an HTTP date, at least 1 s", () => {
    const now = Date.parse("2030-01-01T00:00:00Z")
    assert.strictEqual(parseRetryAfter("3", now), 3)
    assert.strictEqual(parseRetryAfter(" 12 ", now), 12)
    assert.strictEqual(parseRetryAfter("0", now), 1)
    assert.strictEqual(parseRetryAfter("Tue, 01 Jan 2030 00:00:09 GMT", now), 9)
    assert.strictEqual(parseRetryAfter("Mon, 31 Dec 2029 23:00:00 GMT", now), 1)
    assert.isUndefined(parseRetryAfter("soon", now))
    assert.isUndefined(parseRetryAfter("-3", now))
    assert.isUndefined(parseRetryAfter(null, now))
    assert.isUndefined(parseRetryAfter(undefined, now))
  })
})
