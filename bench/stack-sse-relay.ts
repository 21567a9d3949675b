/**
 * Benchmark child: the stream case's relay (`sse-relay.ts`) written on the
 * server's own stack — the share of the streamed route's CPU that the stack
 * takes before the route does anything of its own. One HttpApi endpoint,
 * served as the server is (`stack.ts`), decodes the body with the chat
 * route's schema (`ChatRequest`), relays the upstream exactly as the node:http
 * relay does (`relay.ts`), and answers the events from a `Readable` through
 * `HttpServerResponse.raw`, as the server answers a streamed turn. No
 * database, no turn, no middleware, no access log.
 *
 *   npx node bench/stack-sse-relay.ts <upstream port>
 *
 * Started by `bench/run.ts` with an IPC channel: reports `{ type: "ready", port }`
 * and exits when the parent goes away.
 */
import { ChatRequest } from "../packages/domain/src/Chat.ts"
import { Effect, Layer, Schema } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Readable } from "node:stream"
import { errorEvents, HEADERS, makeRelay } from "./relay.ts"
import { launchOnStack } from "./stack.ts"

const upstreamPort = Number(process.argv[2])
if (!Number.isInteger(upstreamPort) || upstreamPort <= 0) {
  console.error("usage: npx node bench/stack-sse-relay.ts <upstream port>")
  process.exit(2)
}

const relay = makeRelay(upstreamPort)

const Api = HttpApi.make("stack-sse-floor").add(HttpApiGroup.make("chat").add(
  HttpApiEndpoint.post("chat", "/api/agent/chat", { payload: ChatRequest, success: Schema.Unknown })
))

/** The relayed answer's body, once the upstream answered 200 (a refusal before is the request's defect: a 500). */
const relayed = (payload: ChatRequest) =>
  Effect.callback<Readable>((resume) => {
    const body = new Readable({ read() {} })
    let opened = false
    relay(payload.messages, {
      open: (events) => {
        opened = true
        body.push(events)
        resume(Effect.succeed(body))
      },
      write: (events) => void body.push(events),
      end: (events) => {
        body.push(events)
        body.push(null)
      },
      fail: (error) => {
        if (!opened) return resume(Effect.die(error))
        body.push(errorEvents(error))
        body.push(null)
      }
    })
  })

const Chat = HttpApiBuilder.group(Api, "chat", (handlers) =>
  Effect.succeed(handlers.handle("chat", ({ payload }) =>
    // The handler answers the stream itself (an HttpServerResponse passes through the API's encoding).
    Effect.map(relayed(payload), (body) => HttpServerResponse.raw(body, { headers: HEADERS, contentType: "text/event-stream" }) as never))))

launchOnStack(HttpRouter.serve(HttpApiBuilder.layer(Api).pipe(Layer.provide(Chat)), { disableLogger: true, disableListenLog: true }))
