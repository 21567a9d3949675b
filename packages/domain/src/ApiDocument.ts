/**
 * The last pass over the generated OpenAPI document: what the Effect
 * generator cannot say from the schemas alone.
 *
 * - the free-form JSON components (`JsonValue`, `JsonObject`) as "any JSON
 *   value per key" instead of `{"type":"object"}`;
 * - checks' conditionals (`if`/`then`) on the schema itself, not in `allOf`;
 * - unknown keys: the decoder ignores them (they are neither stored nor
 *   echoed), so no object says `additionalProperties: false`;
 * - the auth rule: bearer only when the server has `CHAT_TOKEN`, so each
 *   chat operation also accepts the empty requirement (host and admin
 *   tokens are always required);
 * - response headers the HTTP layer sets: `WWW-Authenticate` on 401,
 *   `Allow` on 405, `Retry-After` on 429 (its body's `retryAfter`) and on
 *   503 `database_unavailable`, `overloaded` and `not_ready` (the answer of
 *   every route while the server starts).
 */
import { jsonComponentSchemas } from "./Json.ts"

export const unknownKeysRule = "Unknown keys in a request are ignored: they are neither stored nor echoed, so a " +
  "client may send fields a newer server version knows. Answers may gain new keys: clients should ignore keys " +
  "they do not know."

const header = (description: string) => ({ description, schema: { type: "string" } })

const HEADERS_BY_STATUS: Record<string, { name: string; when?: ReadonlyArray<string>; value: ReturnType<typeof header> }> = {
  "401": { name: "WWW-Authenticate", value: header("`Bearer realm=\"switchboard\"`: the scheme the operation takes (RFC 9110, 11.6.1)") },
  "405": { name: "Allow", value: header("The methods the path takes, comma-separated") },
  "429": { name: "Retry-After", value: header("Seconds to wait before retrying: the body's `retryAfter`") },
  "503": {
    name: "Retry-After",
    when: ["DatabaseUnavailable", "NotReady", "Overloaded"],
    value: header("Seconds to wait before retrying (sent with `database_unavailable` and `overloaded` (its body's `retryAfter`), and with `not_ready` while the server starts)")
  }
}

const REF = "#/components/schemas/"

/**
 * Effect puts a check's fragment in `allOf`; client generators read each
 * `allOf` member as an object type, so a member that is only an `if`/`then`
 * (a tool message carries `toolResult`) would type every key as `never`.
 * Such a member moves into the schema itself: same meaning, plain types.
 */
const hoistConditionals = (schema: Record<string, unknown>) => {
  if (!Array.isArray(schema.allOf) || schema.if !== undefined) return
  const conditional = schema.allOf.find((member) => typeof member === "object" && member !== null && "if" in member)
  if (conditional === undefined) return
  const { description, ...rule } = conditional as Record<string, unknown>
  Object.assign(schema, rule)
  if (description !== undefined && schema.description === undefined) schema.description = description
  schema.allOf = schema.allOf.filter((member) => member !== conditional)
  if ((schema.allOf as Array<unknown>).length === 0) delete schema.allOf
}

/**
 * In place: drops every `additionalProperties: false`, and points references to
 * a generated copy of a free-form component (`JsonValueEncoded`) at the one
 * {@link jsonComponentSchemas} describes.
 */
const rewrite = (node: unknown): void => {
  const stack: Array<unknown> = [node]
  while (stack.length > 0) {
    const value = stack.pop()
    if (value === null || typeof value !== "object") continue
    if (!Array.isArray(value)) {
      const object = value as Record<string, unknown>
      if (object.additionalProperties === false) delete object.additionalProperties
      hoistConditionals(object)
      if (typeof object.$ref === "string") {
        const name = object.$ref.slice(REF.length).replace(/Encoded$/, "")
        if (object.$ref.startsWith(REF) && Object.hasOwn(jsonComponentSchemas, name)) object.$ref = REF + name
      }
    }
    for (const inner of Object.values(value)) stack.push(inner)
  }
}

type Operation = {
  security?: Array<Record<string, Array<string>>>
  responses?: Record<string, { headers?: Record<string, unknown>; content?: unknown }>
}

export const finishDocument = (spec: Record<string, any>): Record<string, any> => {
  spec.components ??= {}
  const schemas: Record<string, unknown> = { ...spec.components.schemas }
  for (const name of Object.keys(jsonComponentSchemas)) delete schemas[`${name}Encoded`]
  spec.components.schemas = { ...schemas, ...structuredClone(jsonComponentSchemas) }
  rewrite(spec.paths)
  rewrite(spec.components.schemas)
  for (const item of Object.values(spec.paths ?? {}) as Array<Record<string, Operation>>) {
    for (const operation of Object.values(item)) {
      const security = operation.security ?? []
      // Only the chat routes' `bearer` (CHAT_TOKEN) is optional; host and admin tokens are always required.
      const optional = security.some((requirement) => Object.hasOwn(requirement, "bearer"))
      if (optional && !security.some((requirement) => Object.keys(requirement).length === 0)) {
        operation.security = [...security, {}]
      }
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const extra = HEADERS_BY_STATUS[status]
        if (extra === undefined) continue
        const content = JSON.stringify(response.content ?? {})
        if (extra.when !== undefined && !extra.when.some((error) => content.includes(error))) continue
        response.headers = { ...response.headers, [extra.name]: extra.value }
      }
    }
  }
  return spec
}
