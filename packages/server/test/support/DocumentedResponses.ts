/**
 * Every answer a route test sees must be one the OpenAPI document promises:
 * its status is among the operation's documented responses, and a JSON body
 * validates against the schema documented for that status. `TestServer`'s
 * request helpers call {@link checkDocumented} on every response, so each
 * route test checks the document as a side effect of checking the server.
 *
 * Requests that match no documented operation (an unknown path, a method the
 * path does not take) are left alone here: their answers are the generic
 * JSON errors, tested where they are produced.
 */
import { Api } from "@switchboard/domain"
import { Ajv2020 } from "ajv/dist/2020.js"
import { OpenApi } from "effect/http-api"

export const document = OpenApi.fromApi(Api) as unknown as {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>
}

interface Operation {
  readonly method: string
  readonly template: string
  readonly pattern: RegExp
  readonly responses: Record<string, { content?: Record<string, { schema: unknown }> }>
}

const operations: Array<Operation> = Object.entries(document.paths).flatMap(([template, item]) =>
  Object.entries(item).map(([method, operation]) => ({
    method: method.toUpperCase(),
    template,
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`),
    responses: operation.responses
  }))
)

const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false })
// The whole document under one id, so `#/components/schemas/…` references resolve inside it.
ajv.addSchema(document as object, "openapi")

const pointer = (...segments: Array<string>) => segments.map((s) => s.replace(/~/g, "~0").replace(/\//g, "~1")).join("/")

/** The documented operation a request hits, if any. */
export const operationOf = (method: string, url: string) => {
  const path = new URL(url, "http://x").pathname
  return operations.find((o) => o.method === method.toUpperCase() && o.pattern.test(path))
}

/** Throws (failing the test) when the answer is not one the document promises. */
export const checkDocumented = (method: string, url: string, status: number, contentType: string, json: unknown) => {
  const operation = operationOf(method, url)
  if (operation === undefined) return
  const where = `${method.toUpperCase()} ${operation.template}`
  const response = operation.responses[String(status)]
  if (response === undefined) {
    throw new Error(`${where} answered ${status}, which its OpenAPI responses (${Object.keys(operation.responses).join(", ")}) do not document`)
  }
  const media = contentType.split(";")[0]!.trim()
  if (media !== "application/json" || response.content?.["application/json"] === undefined) return
  const ref = `openapi#/${pointer("paths", operation.template, operation.method.toLowerCase(), "responses", String(status), "content", "application/json", "schema")}`
  const validate = ajv.getSchema(ref)
  if (validate === undefined) throw new Error(`no schema at ${ref}`)
  if (!validate(json)) {
    throw new Error(`${where} answered ${status} with a body its document does not describe: ${ajv.errorsText(validate.errors)} — ${JSON.stringify(json).slice(0, 300)}`)
  }
}
