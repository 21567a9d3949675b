/**
 * Request decoding failures → 400 `{ error, code: "invalid_request" }`, with
 * the offending path in `error` (the framework's default is an empty 400).
 */
import { RequestErrors } from "@switchboard/domain"
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiMiddleware } from "effect/http-api"

const WHAT = { Params: "path", Headers: "headers", Query: "query", Body: "body", Payload: "body", ResponseHeaders: "response" } as const

/** `Expected string\n  at ["messages"][0]["id"]` → `Expected string at messages[0].id` */
export const describeSchemaError = (message: string) =>
  message
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.length > 0)
    .map((line) =>
      line.startsWith("at ")
        ? `at ${line.slice(3).replace(/\["([^"\]]*)"\]/g, ".$1").replace(/^\./, "")}`
        : line
    )
    .join(" ")
    .replace(/ at /g, " at ")

export const RequestErrorsLive = HttpApiMiddleware.layerSchemaErrorTransform(RequestErrors, (e) =>
  Effect.succeed(HttpServerResponse.jsonUnsafe({
    error: `Invalid request ${WHAT[e.kind]}: ${describeSchemaError(e.cause.message)}`,
    code: "invalid_request"
  }, { status: 400 })))
