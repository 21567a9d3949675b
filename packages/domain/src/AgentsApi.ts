/**
 * The agents' routes (docs/agents.md): operators define agents
 * (`/admin/agents`, behind `ADMIN_TOKEN`); any client reads an agent's public
 * view — its tools and context schema, never its prompt — to check that its
 * tool registry implements every tool before the first turn.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { AdminAuth } from "./AdminApi.ts"
import { AgentBody, AgentDefinition, AgentInfo, AgentName, NewAgent } from "./Agents.ts"
import { ChatAuth, chatAuthRule, RequestErrors } from "./ChatApi.ts"
import {
  AgentBuiltIn,
  AgentExists,
  AgentNotFound,
  anyRouteErrors,
  bodyErrors,
  CredentialUnavailable,
  DatabaseUnavailable,
  InvalidRequest,
  NotFound
} from "./Errors.ts"

export const AgentList = Schema.Struct({ agents: Schema.Array(AgentDefinition) })
export type AgentList = typeof AgentList.Type

export const CreatedAgent = Schema.Struct({ name: AgentName })

const doc = (summary: string, description: string) => OpenApi.annotations({ summary, description })

export class AgentsApi extends HttpApiGroup.make("agents")
  .add(
    HttpApiEndpoint.get("get", "/api/agents/:name", {
      params: { name: AgentName },
      success: AgentInfo,
      error: [...anyRouteErrors, InvalidRequest, NotFound, AgentNotFound, DatabaseUnavailable]
    }).annotateMerge(doc(
      "An agent's public view",
      "Its name, description, client tools (the spec's tool schema), job kinds and context schema — never its " +
        "system prompt. A client checks its tool registry against `tools` before the first turn."
    ))
  )
  .middleware(ChatAuth)
  .middleware(RequestErrors)
  .annotateMerge(OpenApi.annotations({ description: "Agents, as clients see them. " + chatAuthRule }))
{}

export class AgentsAdminApi extends HttpApiGroup.make("agentsAdmin")
  .add(
    HttpApiEndpoint.post("create", "/admin/agents", {
      payload: NewAgent,
      success: CreatedAgent.pipe(HttpApiSchema.status(201)),
      error: [...anyRouteErrors, ...bodyErrors, AgentExists, AgentBuiltIn, CredentialUnavailable, DatabaseUnavailable]
    }).annotateMerge(doc(
      "Define an agent",
      "Its system prompt (a template: `{{context.a.b}}` is filled from each turn's context), its client tools, " +
        "the job kinds it may dispatch, its MCP servers (their `headers` write-only: sealed under `CREDENTIAL_KEY`, " +
        "never answered), an optional JSON Schema for its context and an optional model. Used by the " +
        "next turn that names it, on every replica."
    )),
    HttpApiEndpoint.put("put", "/admin/agents/:name", {
      params: { name: AgentName },
      payload: AgentBody,
      success: AgentDefinition,
      error: [...anyRouteErrors, ...bodyErrors, AgentBuiltIn, CredentialUnavailable, DatabaseUnavailable]
    }).annotateMerge(doc(
      "Define or replace an agent",
      "Creates the agent or replaces its whole definition (idempotent: what `switchboard admin agents apply` " +
        "sends). The next turn of any chat of this agent, on any replica, uses the new definition. The built-in " +
        "agent cannot be replaced (409 `agent_builtin`)."
    )),
    HttpApiEndpoint.get("list", "/admin/agents", {
      success: AgentList,
      error: [...anyRouteErrors, DatabaseUnavailable]
    }).annotateMerge(doc("Every agent", "The built-in agent first (`builtIn: true`), then the stored ones by name.")),
    HttpApiEndpoint.delete("remove", "/admin/agents/:name", {
      params: { name: AgentName },
      success: HttpApiSchema.NoContent,
      error: [...anyRouteErrors, InvalidRequest, NotFound, AgentNotFound, AgentBuiltIn, DatabaseUnavailable]
    }).annotateMerge(doc(
      "Delete an agent",
      "Its chats keep their transcripts; a later turn of one of them answers 404 `agent_not_found`. The built-in " +
        "agent cannot be deleted (409 `agent_builtin`)."
    ))
  )
  .middleware(AdminAuth)
  .middleware(RequestErrors)
  .annotateMerge(OpenApi.annotations({
    description: "Agents as configuration, for operators: `Authorization: Bearer $ADMIN_TOKEN`, always required."
  }))
{}
