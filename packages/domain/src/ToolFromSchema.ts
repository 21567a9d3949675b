/**
 * A tool declared once: its arguments are an Effect Schema `Struct` whose
 * fields carry their descriptions (`annotate({ description })`), and both
 * forms the rest of the system needs are derived from it — the spec's
 * `ToolParameter` list, which clients validate calls against, and the JSON
 * Schema a provider is sent. The tool decodes its arguments with the same
 * Schema, so what the model is told, what is validated and what is decoded
 * cannot drift apart.
 *
 * The JSON Schema of a tool whose arguments are flat is exactly what
 * {@link toParametersSchema} builds from its parameter list, so such a tool
 * carries no `inputSchema` (its `ToolSchema` is what it always was). A tool
 * whose arguments the list cannot say — an array's item type, an object's
 * keys, values offered to the model but enforced by the tool itself — carries
 * the full JSON Schema as `inputSchema`.
 *
 * The model is asked for the decoded (Type) side: a key with a decoding
 * default (`Schema.withDecodingDefaultKey`) is required in both forms, the
 * default being leniency towards a model that leaves it out, not an option
 * to offer.
 */
import { SchemaAST } from "effect"
import type { Schema } from "effect"
import type { ParameterType, ToolParameter, ToolSchema } from "./ToolSchema.ts"

/**
 * Annotation of a string field: values offered to the model as the JSON
 * Schema's `enum` but checked by the tool itself, so that a value off the list
 * is refused in the tool's own words. (A `Schema.Literals` field binds its
 * values everywhere: the parameter list, the JSON Schema and the decoding.)
 */
export const OfferedValues = "switchboard/domain/ToolFromSchema/OfferedValues"

type JsonSchema = Record<string, unknown>

/** What a parameter's own JSON Schema says: its type, description and allowed values. */
type ParameterShape = Pick<ToolParameter, "type" | "description" | "enum">

/** The JSON Schema of one parameter: `array` and `object` stay unconstrained (the internal format has no item types). */
const parameterSchema = (parameter: ParameterShape): JsonSchema => ({
  type: parameter.type,
  ...(parameter.description !== undefined && parameter.description !== "" ? { description: parameter.description } : {}),
  ...(parameter.enum !== undefined && parameter.enum.length > 0 ? { enum: [...parameter.enum] } : {})
})

/** The `parameters` JSON Schema of a tool: a closed object whose `required` lists the keys declared required. */
export const toParametersSchema = (parameters: ReadonlyArray<ToolParameter>): JsonSchema => ({
  type: "object",
  properties: Object.fromEntries(parameters.map((p) => [p.key, parameterSchema(p)])),
  required: parameters.filter((p) => p.required).map((p) => p.key),
  additionalProperties: false
})

const unsupported = (ast: SchemaAST.AST): never => {
  throw new Error(`a tool argument cannot be declared as ${ast._tag}: use strings, numbers, booleans, arrays or structs`)
}

const isInteger = (ast: SchemaAST.AST) =>
  (ast.checks ?? []).some((check) => (check.annotations?.["representation"] as { id?: unknown } | undefined)?.id === "effect/schema/isInt")

/** The string values a `Literal` or a union of them allows, or undefined for any other node. */
const literalStrings = (ast: SchemaAST.AST): ReadonlyArray<string> | undefined => {
  const members = SchemaAST.isUnion(ast) ? ast.types : [ast]
  const values = members.map((member) => SchemaAST.isLiteral(member) && typeof member.literal === "string" ? member.literal : undefined)
  return values.every((v): v is string => v !== undefined) ? values : undefined
}

const typeOf = (ast: SchemaAST.AST): ParameterType => {
  if (SchemaAST.isString(ast) || literalStrings(ast) !== undefined) return "string"
  if (SchemaAST.isNumber(ast)) return isInteger(ast) ? "integer" : "number"
  if (SchemaAST.isBoolean(ast)) return "boolean"
  if (SchemaAST.isArrays(ast) && ast.elements.length === 0 && ast.rest.length === 1) return "array"
  if (SchemaAST.isObjects(ast) && ast.indexSignatures.length === 0) return "object"
  return unsupported(ast)
}

const shapeOf = (ast: SchemaAST.AST): ParameterShape => {
  const description = SchemaAST.resolveDescription(ast)
  const values = literalStrings(ast)
  return {
    type: typeOf(ast),
    ...(description === undefined ? {} : { description }),
    ...(values === undefined ? {} : { enum: values })
  }
}

const propertiesOf = (ast: SchemaAST.AST): ReadonlyArray<SchemaAST.PropertySignature> => {
  if (!SchemaAST.isObjects(ast) || ast.indexSignatures.length > 0) return unsupported(ast)
  for (const property of ast.propertySignatures) {
    if (typeof property.name !== "string") throw new Error("a tool argument's key must be a string")
  }
  return ast.propertySignatures
}

/** A node's JSON Schema: what a parameter says of it, then what only JSON Schema can say (items, keys, offered values). */
const jsonSchemaOf = (ast: SchemaAST.AST): JsonSchema => {
  const offered = SchemaAST.resolveAt<ReadonlyArray<string>>(OfferedValues)(ast)
  return {
    ...parameterSchema(shapeOf(ast)),
    ...(offered === undefined ? {} : { enum: [...offered] }),
    ...(SchemaAST.isArrays(ast) ? { items: jsonSchemaOf(ast.rest[0]!) } : {}),
    ...(SchemaAST.isObjects(ast) ? objectSchemaOf(ast) : {})
  }
}

const objectSchemaOf = (ast: SchemaAST.AST) => {
  const properties = propertiesOf(ast)
  return {
    properties: Object.fromEntries(properties.map((p) => [p.name, jsonSchemaOf(p.type)])),
    required: properties.filter((p) => !SchemaAST.isOptional(p.type)).map((p) => p.name as string)
  }
}

/** The spec's parameter list of a tool's argument schema (a `Struct`), in field order. */
export const toolParameters = (schema: Schema.Top): ReadonlyArray<ToolParameter> =>
  propertiesOf(SchemaAST.toType(schema.ast)).map((p) => {
    const { description, enum: values, type } = shapeOf(p.type)
    return {
      key: p.name as string,
      type,
      required: !SchemaAST.isOptional(p.type),
      ...(description === undefined ? {} : { description }),
      ...(values === undefined ? {} : { enum: values })
    }
  })

/** The JSON Schema of a tool's arguments as providers receive it: a closed object, described field by field. */
export const toolJsonSchema = (schema: Schema.Top): JsonSchema => ({
  type: "object",
  ...objectSchemaOf(SchemaAST.toType(schema.ast)),
  additionalProperties: false
})

/** A tool's internal definition, derived from its argument schema. */
export const toolFromSchema = (name: string, description: string, schema: Schema.Top): ToolSchema => {
  const parameters = toolParameters(schema)
  const inputSchema = toolJsonSchema(schema)
  // Compared as text: both are built here, key by key in the same order, so equal means the same bytes.
  return JSON.stringify(inputSchema) === JSON.stringify(toParametersSchema(parameters))
    ? { name, description, parameters }
    : { name, description, parameters, inputSchema }
}
