/**
 * Which sub-agent kinds exist: the built-in ones (code: `BuiltInKinds.ts`)
 * and the defined ones (stored: `SubagentKindsRepo`). Operators write and
 * delete the defined ones; the job tools read them per turn.
 */
import type { CredentialUnavailable, McpServerBody, SubagentDefinition } from "@switchboard/domain"
import { isBuiltInKind, SubagentBuiltIn, SubagentInUse, SubagentNotFound } from "@switchboard/domain"
import { Context, Effect, Layer } from "effect"
import { sealHeaders } from "../../agents/McpHeaders.ts"
import { subagentOwner } from "../../agents/McpHeadersRows.ts"
import { CredentialKeys } from "../../secrets/CredentialKeys.ts"
import { builtInKindDefinitions } from "./BuiltInKinds.ts"
import { SubagentKindsRepo } from "./SubagentKindsRepo.ts"

const builtIn = (kind: string) =>
  new SubagentBuiltIn({ error: `"${kind}" is a built-in sub-agent kind: it cannot be replaced or deleted`, kind })

export class SubagentKinds extends Context.Service<SubagentKinds, {
  /** The built-in kinds first, then the defined ones by name. */
  readonly list: Effect.Effect<ReadonlyArray<SubagentDefinition>>
  /** The defined kind of that name (never a built-in one). */
  defined(kind: string): Effect.Effect<SubagentDefinition | undefined>
  /** `servers`: its MCP servers as written, headers included (sealed here). */
  put(
    definition: SubagentDefinition,
    servers: ReadonlyArray<McpServerBody>
  ): Effect.Effect<{ readonly existed: boolean }, SubagentBuiltIn | CredentialUnavailable>
  remove(kind: string): Effect.Effect<void, SubagentNotFound | SubagentBuiltIn | SubagentInUse>
}>()("switchboard/server/jobs/kinds/SubagentKinds") {
  static readonly layerNoDeps = Layer.effect(SubagentKinds, Effect.gen(function*() {
    const repo = yield* SubagentKindsRepo
    const keys = yield* CredentialKeys
    return SubagentKinds.of({
      list: Effect.map(repo.list, (defined) => [...builtInKindDefinitions, ...defined]),
      defined: (kind) => isBuiltInKind(kind) ? Effect.succeed(undefined) : Effect.map(repo.get([kind]), (found) => found[0]),
      put: (definition, servers) =>
        isBuiltInKind(definition.kind)
          ? Effect.fail(builtIn(definition.kind))
          : sealHeaders({ name: subagentOwner(definition.kind), mcpServers: definition.mcpServers }, servers).pipe(
            Effect.provideService(CredentialKeys, keys),
            Effect.flatMap((headers) => repo.put(definition, headers))
          ),
      remove: (kind) =>
        isBuiltInKind(kind)
          ? Effect.fail(builtIn(kind))
          : Effect.flatMap(repo.remove(kind), ({ namedBy, removed }): Effect.Effect<void, SubagentNotFound | SubagentInUse> => {
            if (namedBy.length > 0) {
              return Effect.fail(new SubagentInUse({
                error: `The sub-agent kind "${kind}" is named by the agent${namedBy.length === 1 ? "" : "s"} ${namedBy.join(", ")}: ` +
                  "take it out of their jobKinds first",
                kind,
                agents: namedBy
              }))
            }
            return removed ? Effect.void : Effect.fail(new SubagentNotFound({ error: `No sub-agent kind named "${kind}"`, kind }))
          })
    })
  }))

  static readonly layer = SubagentKinds.layerNoDeps.pipe(Layer.provideMerge(SubagentKindsRepo.layer))
}
