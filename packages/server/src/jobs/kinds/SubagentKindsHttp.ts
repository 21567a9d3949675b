/**
 * Handlers of the sub-agent kinds' routes: thin, over `SubagentKinds`. Every
 * change is logged with the kind's name, never its prompt, never an MCP
 * server's headers.
 */
import { Api, keptHeaderNames, subagentDefinitionOf } from "@switchboard/domain"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { checkKind } from "./KindCheck.ts"
import { SubagentKinds } from "./SubagentKinds.ts"

export const SubagentKindsHttp = HttpApiBuilder.group(Api, "subagentsAdmin", Effect.fn(function*(handlers) {
  const kinds = yield* SubagentKinds
  return handlers.handleAll({
    put: Effect.fn(function*({ params, payload }) {
      // A server written without `headers` keeps the stored ones (same name and URL): write-only values round-trip.
      const stored = yield* kinds.defined(params.kind)
      const definition = yield* checkKind(subagentDefinitionOf(params.kind, payload, keptHeaderNames(stored)))
      const { existed } = yield* kinds.put(definition, payload.mcpServers ?? [])
      yield* Effect.logInfo(`sub-agent kind ${params.kind} ${existed ? "replaced" : "created"}`)
      return definition
    }),
    list: () => Effect.map(kinds.list, (subagents) => ({ subagents })),
    remove: Effect.fn(function*({ params }) {
      yield* kinds.remove(params.kind)
      yield* Effect.logInfo(`sub-agent kind ${params.kind} deleted`)
    })
  })
}))
