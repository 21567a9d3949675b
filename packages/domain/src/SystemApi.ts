/** Liveness and readiness: what an orchestrator (systemd, Kubernetes) probes. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { NotReady } from "./Errors.ts"

export class SystemApi extends HttpApiGroup.make("system")
  .add(
    HttpApiEndpoint.get("healthz", "/healthz", { success: Schema.Struct({ status: Schema.Literal("ok") }) }),
    HttpApiEndpoint.get("readyz", "/readyz", {
      success: Schema.Struct({ status: Schema.Literal("ready"), migrations: Schema.Number }),
      error: NotReady
    })
  )
{}
