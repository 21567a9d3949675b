/**
 * What an agent definition must satisfy beyond its schema, checked when it is
 * written (so a turn never finds a broken agent): tool names unique and not
 * the server's own (the job tools), and a `contextSchema` that is a JSON
 * Schema a validator compiles. And, per turn, the request's context checked
 * against the agent's schema — a built-in agent's own, or the definition's
 * JSON Schema — with a 400 naming the path.
 */
import type { AgentDefinition, JsonObject } from "@switchboard/domain"
import { InvalidRequest, JobKind } from "@switchboard/domain"
import { Ajv } from "ajv"
import type { ValidateFunction } from "ajv"
import { Effect } from "effect"
import { builtInOf } from "./BuiltInAgents.ts"

// strict: false — an operator's schema may carry keywords this validator does not know (`examples`, vendor ones).
const ajv = new Ajv({ strict: false, allErrors: false })

/**
 * Compiled validators by schema text. Bounded; a pure function's memo (the same schema compiles the
 * same validator on every replica), so it holds nothing replicas could disagree on.
 */
const compiled = new Map<string, ValidateFunction>()
const MAX_COMPILED = 256

/** A compiled validator of `schema` (throws when it is not a JSON Schema). */
export const validatorFor = (schema: JsonObject): ValidateFunction => {
  const key = JSON.stringify(schema)
  let validate = compiled.get(key)
  if (validate === undefined) {
    validate = ajv.compile(schema)
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!)
    compiled.set(key, validate)
  }
  return validate
}

const invalid = (error: string) => new InvalidRequest({ error })

/** The first item whose name an earlier one has, with its index (what a 400 names). */
export const firstRepeated = <A>(items: ReadonlyArray<A>, nameOf: (a: A) => string): { readonly index: number; readonly name: string } | undefined => {
  const seen = new Set<string>()
  for (const [index, item] of items.entries()) {
    const name = nameOf(item)
    if (seen.has(name)) return { index, name }
    seen.add(name)
  }
  return undefined
}

/** The definition, or a 400 saying what is wrong with it. */
export const checkAgent = (agent: AgentDefinition): Effect.Effect<AgentDefinition, InvalidRequest> =>
  Effect.gen(function*() {
    const seen = new Set<string>()
    for (const [i, tool] of agent.tools.entries()) {
      if (seen.has(tool.name)) return yield* invalid(`Invalid request body: tools[${i}]: the tool "${tool.name}" is declared twice`)
      if ((JobKind.literals as ReadonlyArray<string>).includes(tool.name)) {
        return yield* invalid(
          `Invalid request body: tools[${i}]: "${tool.name}" is a job tool the server runs; list it in jobKinds instead`
        )
      }
      seen.add(tool.name)
    }
    const server = firstRepeated(agent.mcpServers ?? [], (s) => s.name)
    if (server !== undefined) {
      return yield* invalid(`Invalid request body: mcpServers[${server.index}]: the MCP server "${server.name}" is named twice`)
    }
    if (agent.contextSchema !== undefined) {
      const schema = agent.contextSchema
      yield* Effect.try({
        try: () => validatorFor(schema),
        catch: (cause) =>
          invalid(`Invalid request body: contextSchema is not a JSON Schema: ${cause instanceof Error ? cause.message : String(cause)}`)
      })
    }
    return agent
  })

/** `/a/b/0` (a JSON pointer) → `a.b[0]`, the way the other 400s name a path. */
export const pathOf = (pointer: string): string =>
  pointer.split("/").slice(1).map((key) => key.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce((path, key) => /^\d+$/.test(key) ? `${path}[${key}]` : path === "" ? key : `${path}.${key}`, "")

/**
 * The request's context as the agent takes it, or a 400 naming the first path that fails its schema.
 */
export const checkContext = (
  agent: AgentDefinition,
  context: JsonObject | undefined
): Effect.Effect<JsonObject | undefined, InvalidRequest> => {
  if (context === undefined) return Effect.succeed(undefined)
  const own = builtInOf(agent)?.context
  if (own !== undefined) return own(context)
  if (agent.contextSchema === undefined) return Effect.succeed(context)
  const validate = validatorFor(agent.contextSchema)
  if (validate(context)) return Effect.succeed(context)
  const first = validate.errors?.[0]
  const at = pathOf(first?.instancePath ?? "")
  return Effect.fail(invalid(
    `Invalid request body: context${at === "" ? "" : `.${at}`} ${first?.message ?? "does not match the agent's context schema"} ` +
      `(agent "${agent.name}")`
  ))
}
