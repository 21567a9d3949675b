/**
 * Text and JSON values as they may cross the wire.
 *
 * PostgreSQL cannot store U+0000 in `text` or `jsonb`, so a NUL anywhere in a
 * request would otherwise surface as a database error (a 500) long after the
 * request was accepted. Every string field of the domain rejects it up front,
 * and free-form JSON (`metadata`, tool results, data parts) is walked for it,
 * keys included, so the 400 names the exact path.
 */
import { Schema } from "effect"

const NUL = "\u0000"
const NUL_ISSUE = "must not contain the NUL character (\\u0000)"

/** Deeper JSON is refused: nothing legitimate nests this far, and deep values exhaust recursive code downstream. */
export const MAX_JSON_DEPTH = 64

type Finding = { readonly path: ReadonlyArray<PropertyKey>; readonly issue: string }

/** The first NUL (in a string or a key) or excessive depth, walked without recursion. */
const inspect = (root: unknown): Finding | undefined => {
  const stack: Array<{ value: unknown; path: ReadonlyArray<PropertyKey> }> = [{ value: root, path: [] }]
  while (stack.length > 0) {
    const { path, value } = stack.pop()!
    if (typeof value === "string") {
      if (value.includes(NUL)) return { path, issue: NUL_ISSUE }
      continue
    }
    if (value === null || typeof value !== "object") continue
    if (path.length >= MAX_JSON_DEPTH) return { path, issue: `must not nest deeper than ${MAX_JSON_DEPTH} levels` }
    const entries: Array<[PropertyKey, unknown]> = Array.isArray(value)
      ? value.map((inner, i) => [i, inner])
      : Object.entries(value)
    // Reversed onto the stack so the first offending path in document order is the one reported.
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, inner] = entries[i]!
      if (typeof key === "string" && key.includes(NUL)) return { path: [...path, key], issue: NUL_ISSUE }
      stack.push({ value: inner, path: [...path, key] })
    }
  }
  return undefined
}

const noNulDeep = Schema.makeFilter<unknown>((value) => inspect(value))

/** The NUL rule as a JSON Schema `pattern`, so the document says what the decoder checks. */
export const NUL_FREE_PATTERN = "^[^\\u0000]*$"

/** A string that PostgreSQL can store. */
export const Text = Schema.String.check(
  Schema.makeFilter((s: string) => s.includes(NUL) ? NUL_ISSUE : undefined, {
    toJsonSchema: () => ({ pattern: NUL_FREE_PATTERN })
  })
)

/** A non-empty {@link Text}. */
export const NonEmptyText = Text.check(Schema.isMinLength(1))

const FREE_FORM_RULE = `Strings and keys must not contain NUL (\\u0000); at most ${MAX_JSON_DEPTH} levels deep.`

/**
 * Any JSON value, NUL-free. Named `JsonValue` in the OpenAPI document, where
 * {@link jsonComponentSchemas} describes it (the generated `{}` says nothing).
 */
export const JsonValue = Schema.Unknown.check(noNulDeep).annotate({ identifier: "JsonValue" })

/** A JSON object (not an array, not null) whose keys hold any JSON value, NUL-free. */
export const JsonObject = Schema.Record(Schema.String, Schema.Unknown).check(noNulDeep).annotate({ identifier: "JsonObject" })
export type JsonObject = typeof JsonObject.Type

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })

/**
 * The OpenAPI components of the free-form values, replacing the generated
 * `{"type":"object"}` (which client generators read as `Record<string, never>`)
 * with "any JSON value per key", recursively.
 */
export const jsonComponentSchemas = {
  JsonValue: {
    description: `Any JSON value. ${FREE_FORM_RULE}`,
    anyOf: [
      { type: "null" },
      { type: "boolean" },
      { type: "number" },
      { type: "string", pattern: NUL_FREE_PATTERN },
      // Array items are left open: openapi-typescript cannot type a union that holds an array of itself.
      { type: "array", items: { description: "Any JSON value (NUL-free)" } },
      ref("JsonObject")
    ]
  },
  JsonObject: {
    description: `A JSON object; each key holds any JSON value. ${FREE_FORM_RULE}`,
    type: "object",
    propertyNames: { pattern: NUL_FREE_PATTERN },
    additionalProperties: ref("JsonValue")
  }
} as const
