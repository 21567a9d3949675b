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
import { apiErrors, describeApiError, describeApiFailure } from "../src/api/ApiFailure.ts"
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
})
