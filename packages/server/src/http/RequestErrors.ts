/**
 * What an operation says of a request it cannot decode, as the contract's
 * JSON (the framework's defaults are an empty 400 and a plain-text 415):
 *
 * - a decoding failure (body, path, query) → 400 `invalid_request`, with the
 *   offending path in `error`;
 * - a body of a content type the operation does not take → 415
 *   `unsupported_media_type` naming the types it takes (the framework's
 *   refusal, said again with the operation at hand); a body sent without a
 *   type is refused the same way, since the framework would read it as JSON;
 * - no type and no body for an operation that does not take JSON → 400
 *   `invalid_request` saying the body is empty and what is expected.
 */
import { RequestErrors, statusOfCode } from "@switchboard/domain"
import { Effect, Layer } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiError } from "effect/http-api"

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

const invalid = (error: string) => HttpServerResponse.jsonUnsafe({ error, code: "invalid_request" }, { status: statusOfCode.invalid_request })

const unsupported = (wanted: ReadonlyArray<string>, type: string) =>
  HttpServerResponse.jsonUnsafe({
    error: `Content-Type must be ${wanted.join(" or ")}${type === "" ? "" : `, got ${type}`}`,
    code: "unsupported_media_type"
  }, { status: statusOfCode.unsupported_media_type })

const contentTypeOf = (request: HttpServerRequest.HttpServerRequest) =>
  (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()

const hasBody = (request: HttpServerRequest.HttpServerRequest) =>
  Number(request.headers["content-length"] ?? "0") > 0 || request.headers["transfer-encoding"] !== undefined

export const layer = Layer.succeed(RequestErrors, (httpEffect, { endpoint }) =>
  Effect.gen(function*() {
    const decoded = Effect.catch(httpEffect, (e) =>
      HttpApiError.HttpApiSchemaError.is(e)
        ? Effect.succeed(invalid(`Invalid request ${WHAT[e.kind]}: ${describeSchemaError(e.cause.message)}`))
        : Effect.fail(e))
    const wanted = [...endpoint.payload.keys()]
    if (wanted.length === 0) return yield* decoded
    const request = yield* HttpServerRequest.HttpServerRequest
    const type = contentTypeOf(request)
    if (type === "" && hasBody(request)) return unsupported(wanted, type)
    const response = yield* decoded
    if (response.status !== statusOfCode.unsupported_media_type) return response
    return type === "" ? invalid(`Invalid request body: empty; expected ${wanted.join(" or ")}`) : unsupported(wanted, type)
  }))
