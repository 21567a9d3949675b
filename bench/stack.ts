/**
 * The two floors written on the server's stack (`stack-proxy.ts`,
 * `stack-sse-relay.ts`) are served as the server is: their HttpApi over
 * `HttpRouter.serve` over `NodeHttpServer`. This serves one on 127.0.0.1 and
 * tells the parent its port over IPC once the Effect handler is installed (it
 * comes after the port is bound); the child exits when the parent goes away.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Layer } from "effect"
import { createServer } from "node:http"
import type { Server } from "node:http"
import type { AddressInfo } from "node:net"

/** The server's accept queue (`Server.ts`): Node's default, 511, turns away part of a burst, each a second late. */
const onLoopback = (server: Server) => NodeHttpServer.layer(() => server, { port: 0, host: "127.0.0.1", backlog: 65_535 })

export const launchOnStack = (served: Layer.Layer<never, unknown, Layer.Success<ReturnType<typeof onLoopback>>>) => {
  const server = createServer()
  process.on("disconnect", () => process.exit(0))
  process.on("SIGTERM", () => process.exit(0))
  const announce = setInterval(() => {
    if (server.listening && server.listenerCount("request") > 0) {
      clearInterval(announce)
      process.send?.({ type: "ready", port: (server.address() as AddressInfo).port })
    }
  }, 10)
  Layer.launch(served.pipe(Layer.provide(onLoopback(server)))).pipe(Effect.runFork)
}
