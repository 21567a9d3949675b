/**
 * What a sub-agent kind's definition must satisfy beyond its schema, checked
 * when it is written (so a dispatch never finds a broken kind): input keys
 * unique, tools and MCP servers named once, and a result schema that a
 * validator compiles and that describes an object (the arguments of
 * `submit_result` are the result).
 */
import type { SubagentDefinition } from "@switchboard/domain"
import { InvalidRequest } from "@switchboard/domain"
import { Effect } from "effect"
import { firstRepeated, validatorFor } from "../../agents/AgentCheck.ts"

const invalid = (error: string) => new InvalidRequest({ error: `Invalid request body: ${error}` })

/** The definition, or a 400 saying what is wrong with it. */
export const checkKind = (definition: SubagentDefinition): Effect.Effect<SubagentDefinition, InvalidRequest> =>
  Effect.gen(function*() {
    const input = firstRepeated(definition.input, (p) => p.key)
    if (input !== undefined) return yield* invalid(`input[${input.index}]: the parameter "${input.name}" is declared twice`)
    const tool = firstRepeated(definition.tools, (t) => t)
    if (tool !== undefined) return yield* invalid(`tools[${tool.index}]: "${tool.name}" is named twice`)
    const server = firstRepeated(definition.mcpServers ?? [], (s) => s.name)
    if (server !== undefined) return yield* invalid(`mcpServers[${server.index}]: the MCP server "${server.name}" is named twice`)
    if (definition.result["type"] !== "object") {
      return yield* invalid(`result: must be a JSON Schema of an object ("type": "object"): submit_result's arguments are the result`)
    }
    yield* Effect.try({
      try: () => validatorFor(definition.result),
      catch: (cause) => invalid(`result is not a JSON Schema: ${cause instanceof Error ? cause.message : String(cause)}`)
    })
    return definition
  })
