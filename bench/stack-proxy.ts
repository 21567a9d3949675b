/**
 * Benchmark child: the pass-through written on the server's own stack — the
 * floor of what any route built on it can reach. One HttpApi endpoint
 * (`HttpApiBuilder`, `HttpRouter.serve` over `NodeHttpServer`, as the server
 * is served) decodes the body with a schema (model and messages), posts it to
 * the upstream through the server's pooled transport (`UndiciPool`) and
 * answers the upstream's JSON; no middleware, no access log, no database.
 * The chat route does all of this and more: the gap between this and the
 * node:http pass-through is what the stack itself costs.
 *
 *   npx node bench/stack-proxy.ts <upstream port>
 *
 * Started by `bench/run.ts` with an IPC channel: reports `{ type: "ready", port }`
 * and exits when the parent goes away.
 */
import * as UndiciPool from "../packages/providers/src/openai/UndiciPool.ts"
import { DEFAULT_MAX_RESPONSE_BYTES } from "../packages/providers/src/ResponseLimit.ts"
import { Effect, Layer, Schema } from "effect"
import { HttpRouter } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { launchOnStack } from "./stack.ts"

const upstreamPort = Number(process.argv[2])
if (!Number.isInteger(upstreamPort) || upstreamPort <= 0) {
  console.error("usage: npx node bench/stack-proxy.ts <upstream port>")
  process.exit(2)
}

const Message = Schema.Struct({ role: Schema.String, content: Schema.String })
const Api = HttpApi.make("stack-floor").add(HttpApiGroup.make("proxy").add(
  HttpApiEndpoint.post("completions", "/v1/chat/completions", {
    payload: Schema.Struct({ model: Schema.String, messages: Schema.Array(Message) }),
    success: Schema.Unknown
  })
))

const UPSTREAM = new URL(`http://127.0.0.1:${upstreamPort}/v1/chat/completions`)
const Proxy = HttpApiBuilder.group(Api, "proxy", (handlers) =>
  Effect.map(UndiciPool.make({ origin: UPSTREAM.origin, headers: { "content-type": "application/json" }, secrets: [], maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES }), (pool) =>
    handlers.handle("completions", ({ payload }) => pool.post(UPSTREAM, {}, JSON.stringify(payload)).pipe(Effect.orDie))))

launchOnStack(HttpRouter.serve(HttpApiBuilder.layer(Api).pipe(Layer.provide(Proxy)), { disableLogger: true, disableListenLog: true }))
