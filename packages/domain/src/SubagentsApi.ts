/**
 * The sub-agent kinds' routes (docs/subagents.md), for operators behind
 * `ADMIN_TOKEN`: define a kind, list every kind (the built-in ones
 * read-only), delete one no agent names.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { AdminAuth } from "./AdminApi.ts"
import { RequestErrors } from "./ChatApi.ts"
import {
  anyRouteErrors,
  bodyErrors,
  CredentialUnavailable,
  DatabaseUnavailable,
  InvalidRequest,
  NotFound,
  SubagentBuiltIn,
  SubagentInUse,
  SubagentNotFound
} from "./Errors.ts"
import { KindName } from "./JobKind.ts"
import { SubagentBody, SubagentDefinition, SubagentList } from "./SubagentKinds.ts"

const doc = (summary: string, description: string) => OpenApi.annotations({ summary, description })

export class SubagentsAdminApi extends HttpApiGroup.make("subagentsAdmin")
  .add(
    HttpApiEndpoint.put("put", "/admin/subagents/:kind", {
      params: { kind: KindName },
      payload: SubagentBody,
      success: SubagentDefinition,
      error: [...anyRouteErrors, ...bodyErrors, SubagentBuiltIn, CredentialUnavailable, DatabaseUnavailable]
    }).annotateMerge(doc(
      "Define or replace a sub-agent kind",
      "The job tool the chat model sees (`description`, `input`), the sub-agent's prompt (`{{input.x}}` filled " +
        "from the call's arguments), its built-in tools by name and its MCP servers (their `headers` write-only), " +
        "the JSON Schema its `submit_result` must match, an optional model, `maxSteps` (default 12) and " +
        "`timeoutMs`. Idempotent (what `switchboard admin subagents apply` sends); a job dispatched later runs the " +
        "new definition, on any replica. A built-in kind → 409 `subagent_builtin`."
    )),
    HttpApiEndpoint.get("list", "/admin/subagents", {
      success: SubagentList,
      error: [...anyRouteErrors, DatabaseUnavailable]
    }).annotateMerge(doc("Every sub-agent kind", "The built-in kinds first (`builtIn: true`), then the defined ones by name; header values never shown.")),
    HttpApiEndpoint.delete("remove", "/admin/subagents/:kind", {
      params: { kind: KindName },
      success: HttpApiSchema.NoContent,
      error: [...anyRouteErrors, InvalidRequest, NotFound, SubagentNotFound, SubagentBuiltIn, SubagentInUse, DatabaseUnavailable]
    }).annotateMerge(doc(
      "Delete a sub-agent kind",
      "Jobs already dispatched finish with the definition they were dispatched with. A kind an agent still names " +
        "→ 409 `subagent_in_use` (with the agents); a built-in one → 409 `subagent_builtin`."
    ))
  )
  .middleware(AdminAuth)
  .middleware(RequestErrors)
  .annotateMerge(OpenApi.annotations({
    description: "Sub-agent kinds as configuration, for operators: `Authorization: Bearer $ADMIN_TOKEN`, always required."
  }))
{}
