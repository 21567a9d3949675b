/** The whole HTTP API, composed from its groups; served by the server, called by the CLI. */
import { HttpApi, OpenApi } from "effect/http-api"
import { AdminApi } from "./AdminApi.ts"
import { ChatApi, RequestErrors } from "./ChatApi.ts"
import { HostsApi } from "./HostsApi.ts"
import { PlannerApi } from "./PlannerApi.ts"
import { SystemApi } from "./SystemApi.ts"

export class Api extends HttpApi.make("switchboard")
  .add(SystemApi)
  .add(ChatApi)
  .add(HostsApi)
  .add(PlannerApi)
  .add(AdminApi)
  .middleware(RequestErrors)
  .annotateMerge(OpenApi.annotations({
    title: "Switchboard",
    version: "0.1.0",
    description: "Runs tool-calling LLM agents: the agent session shell, sub-agent jobs and the cloud planner proxy."
  }))
{}

/** The largest request body the server reads (CONTRACT.md, Errors: over it → 413). */
export const maxRequestBodyBytes = 10 * 1024 * 1024
