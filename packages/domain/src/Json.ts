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

const findNul = (value: unknown, path: Array<PropertyKey>): Array<PropertyKey> | undefined => {
  if (typeof value === "string") return value.includes(NUL) ? path : undefined
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findNul(value[i], [...path, i])
      if (found) return found
    }
    return undefined
  }
  if (value !== null && typeof value === "object") {
    for (const [key, inner] of Object.entries(value)) {
      if (key.includes(NUL)) return [...path, key]
      const found = findNul(inner, [...path, key])
      if (found) return found
    }
  }
  return undefined
}

const noNulDeep = Schema.makeFilter<unknown>((value) => {
  const path = findNul(value, [])
  return path === undefined ? undefined : { path, issue: "must not contain the NUL character (\\u0000)" }
})

/** A string that PostgreSQL can store. */
export const Text = Schema.String.check(
  Schema.makeFilter((s: string) => s.includes(NUL) ? "must not contain the NUL character (\\u0000)" : undefined)
)

/** A non-empty {@link Text}. */
export const NonEmptyText = Text.check(Schema.isMinLength(1))

/** Any JSON value, NUL-free. */
export const JsonValue = Schema.Unknown.check(noNulDeep)

/** A JSON object (not an array, not null), NUL-free. */
export const JsonObject = Schema.Record(Schema.String, Schema.Unknown).check(noNulDeep)
export type JsonObject = typeof JsonObject.Type
