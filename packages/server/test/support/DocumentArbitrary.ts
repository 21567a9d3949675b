/**
 * fast-check arbitraries read from the served OpenAPI document: a value
 * generated here is valid by the document, so a server that refuses it says
 * less than its document promises. It covers the JSON Schema the domain
 * schemas compile to (types, enums, patterns, lengths, minimum, required,
 * additionalProperties, anyOf, and the `if`/`then` of tool messages).
 */
import fc from "fast-check"

type Schema = Record<string, any>

const MAX_DEPTH = 3
const NUL = "\u0000"

const resolve = (root: Schema, ref: string): Schema =>
  ref.replace(/^#\//, "").split("/").reduce((node: any, key) => node[key.replace(/~1/g, "/").replace(/~0/g, "~")], root)

/** The smallest value of a schema: where recursion stops. */
const minimal = (root: Schema, schema: Schema): unknown => {
  if (schema.$ref) return minimal(root, resolve(root, schema.$ref))
  if (schema.anyOf) return minimal(root, schema.anyOf[0])
  if (schema.enum) return schema.enum[0]
  switch (schema.type) {
    case "null": return null
    case "object": return {}
    case "array": return []
    case "string": return ""
    case "boolean": return false
    default: return 0
  }
}

const codePoints = (s: string) => [...s].length

/**
 * Any JSON value without NUL. Strings are whole graphemes: a lone UTF-16
 * surrogate is refused with a 400, a rule the document states in
 * words only (no pattern tool agrees on), so valid values never hold one; the
 * garbage of Fuzz.test.ts does.
 */
export const jsonValue = fc.jsonValue({ maxDepth: 2, stringUnit: "grapheme" }).filter((v) => !JSON.stringify(v).includes("\\u0000"))

const stringArbitrary = (schema: Schema): fc.Arbitrary<string> => {
  const patterns = [schema.pattern, ...(schema.allOf ?? []).map((member: Schema) => member.pattern)]
    .filter((p): p is string => typeof p === "string")
    .map((p) => new RegExp(p, "u"))
  const min = schema.minLength ?? 0
  const max = schema.maxLength ?? Math.max(min, 24)
  // The NUL rule is on every string; any other pattern is the one to generate from.
  const specific = patterns.find((p) => !p.source.includes("u0000"))
  const base = specific !== undefined
    ? fc.stringMatching(specific)
    : fc.string({ unit: "grapheme", minLength: min, maxLength: Math.min(max, 24) }) // graphemes: see jsonValue
  return base.filter((s) => !s.includes(NUL) && codePoints(s) >= min && codePoints(s) <= max && patterns.every((p) => p.test(s)))
}

const satisfiesIf = (condition: Schema, value: Record<string, unknown>) =>
  (condition.required ?? []).every((key: string) => key in value) &&
  Object.entries(condition.properties ?? {}).every(([key, rule]: [string, any]) =>
    !(key in value) || rule.const === undefined || value[key] === rule.const)

export const fromSchema = (root: Schema, schema: Schema, depth = 0): fc.Arbitrary<unknown> => {
  if (schema.$ref) {
    const target = resolve(root, schema.$ref)
    return depth >= MAX_DEPTH ? fc.constant(minimal(root, target)) : fromSchema(root, target, depth + 1)
  }
  if (schema.enum) return fc.constantFrom(...schema.enum)
  if (schema.const !== undefined) return fc.constant(schema.const)
  if (schema.anyOf ?? schema.oneOf) return fc.oneof(...(schema.anyOf ?? schema.oneOf).map((s: Schema) => fromSchema(root, s, depth)))
  switch (schema.type) {
    case "null": return fc.constant(null)
    case "boolean": return fc.boolean()
    case "integer": return fc.integer({ min: schema.minimum ?? -1e6, max: Math.min(schema.maximum ?? 1e6, 1e6) })
    case "number": return fc.double({ noNaN: true, noDefaultInfinity: true, ...(schema.minimum === undefined ? {} : { min: schema.minimum }) })
    case "string": return stringArbitrary(schema)
    case "array": return fc.array(fromSchema(root, schema.items ?? {}, depth + 1), {
      minLength: schema.minItems ?? 0,
      maxLength: Math.max(schema.minItems ?? 0, 3)
    })
    case "object": {
      if (schema.properties === undefined) {
        const value = schema.additionalProperties && typeof schema.additionalProperties === "object"
          ? fromSchema(root, schema.additionalProperties, depth + 1)
          : jsonValue
        const key = schema.propertyNames ? stringArbitrary({ type: "string", ...schema.propertyNames }) : fc.string()
        return fc.dictionary(key, value, { maxKeys: 3 })
      }
      const properties = Object.fromEntries(Object.entries(schema.properties).map(([key, s]) => [key, fromSchema(root, s as Schema, depth + 1)]))
      const record = fc.record(properties, { requiredKeys: schema.required ?? [] }) as fc.Arbitrary<Record<string, unknown>>
      if (schema.if === undefined || schema.then?.required === undefined) return record
      // A conditional `required` (a tool message carries toolResult): add what the condition asks for.
      return record.chain((value) => {
        const missing = (schema.then.required as Array<string>).filter((key) => !(key in value))
        if (!satisfiesIf(schema.if, value) || missing.length === 0) return fc.constant(value)
        return fc.record(Object.fromEntries(missing.map((key) => [key, properties[key]!]))).map((extra) => ({ ...value, ...extra }))
      })
    }
    default:
      // `{}` or a description only: any JSON.
      return jsonValue
  }
}
