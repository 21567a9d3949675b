/**
 * The cheapest call of each realm that needs its token: what the sign-in
 * form tries a token with before keeping it, and what the placeholder pages
 * show the connection by. Neither changes anything on the server.
 */
import type { ApiClient } from "@switchboard/client"
import { Effect } from "effect"
import type { Realm } from "./Session.ts"

export const probes: Record<Realm, (client: ApiClient["Service"]) => Effect.Effect<string, unknown>> = {
  // The built-in agent cannot be deleted: this route answers 200 whenever the token is good.
  chat: (client) => Effect.map(client.agents.get({ params: { name: "media-editor" } }), (agent) => `agent ${agent.name}`),
  admin: (client) =>
    Effect.map(client.admin.listHosts(), ({ hosts }) => `${hosts.length} host${hosts.length === 1 ? "" : "s"}`)
}
