/** The whole HTTP API, composed from its groups; served by the server, called by the CLI. */
import { HttpApi, OpenApi } from "effect/http-api"
import { AdminApi } from "./AdminApi.ts"
import { AgentsAdminApi, AgentsApi } from "./AgentsApi.ts"
import { SubagentsAdminApi } from "./SubagentsApi.ts"
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
  .add(AgentsApi)
  .add(AgentsAdminApi)
  .add(SubagentsAdminApi)
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

/**
 * The most one stored value may hold, in UTF-8 bytes of its JSON: a chat
 * message (the client's, a provider's answer, a steer), a planner prompt, a
 * decision's arguments. Over it, a request's own value is a 413 naming it and a
 * provider's answer a 502 `provider_error` (`too_large`), so nothing that large
 * is ever stored. Why 4 MiB: the database driver refuses to read a row over
 * 16 MiB (its `maxMessageSize`), and the widest row, a planner decision, holds
 * three such values — two prompts and the arguments, whose `jsonb` text comes
 * back at most 1.5 × its JSON (a space after each `,` and `:`) — so at most
 * 14 MiB.
 */
export const maxStoredValueBytes = 4 * 1024 * 1024
