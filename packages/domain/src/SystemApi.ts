/** Liveness and readiness: what an orchestrator (systemd, Kubernetes) probes. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { anyRouteErrors, NotReady } from "./Errors.ts"

export class SystemApi extends HttpApiGroup.make("system")
  .add(
    HttpApiEndpoint.get("healthz", "/healthz", {
      success: Schema.Struct({ status: Schema.Literal("ok") }),
      error: anyRouteErrors
    })
      .annotateMerge(OpenApi.annotations({ summary: "Liveness: 200 while the process lives" })),
    HttpApiEndpoint.get("readyz", "/readyz", {
      success: Schema.Struct({
        status: Schema.Literal("ready"),
        /** How many migrations the database has applied. */
        migrations: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
      }),
      error: [...anyRouteErrors, NotReady]
    }).annotateMerge(OpenApi.annotations({
      summary: "Readiness: 200 once the database answers and every migration is applied, else 503"
    }))
  )
  .annotateMerge(OpenApi.annotations({
    description: "Liveness and readiness probes for orchestrators (systemd, Kubernetes); never authenticated."
  }))
{}
