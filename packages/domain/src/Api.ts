/** The whole HTTP API, composed from its groups; served by the server, called by the CLI. */
import { HttpApi, OpenApi } from "effect/http-api"
import { AdminApi } from "./AdminApi.ts"
import { finishDocument, unknownKeysRule } from "./ApiDocument.ts"
import { ChatApi } from "./ChatApi.ts"
import { HostsApi } from "./HostsApi.ts"
import { JobsApi } from "./JobsApi.ts"
import { PlannerApi } from "./PlannerApi.ts"
import { SystemApi } from "./SystemApi.ts"

export class Api extends HttpApi.make("switchboard")
  .add(SystemApi)
  .add(ChatApi)
  .add(JobsApi)
  .add(HostsApi)
  .add(PlannerApi)
  .add(AdminApi)
  .annotateMerge(OpenApi.annotations({
    title: "Switchboard",
    version: "0.1.0",
    description: "Runs tool-calling LLM agents: the agent session shell, sub-agent jobs and the cloud planner proxy. " +
      "Every error is JSON `{ error, code }` (plus details such as `chatId`). " + unknownKeysRule,
    // Relative: the operations live on the server that serves this document.
    servers: [{ url: "/", description: "The server serving this document" }],
    transform: finishDocument
  }))
{}

/** The largest request body the server reads (docs/errors.md: over it → 413). */
export const maxRequestBodyBytes = 10 * 1024 * 1024
