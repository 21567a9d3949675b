/**
 * The OTLP exporter's client is bounded (`ExportClient.ts`): a collector that
 * hangs, stalls or answers 429 costs dropped spans, never memory without end.
 * First the client alone against fake transports, then effect's real exporter
 * through it against a `node:http` collector that never answers.
 */
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Exit, Fiber } from "effect"
import { HttpClient, HttpClientError, HttpClientRequest, HttpClientResponse } from "effect/http"
import { TestClock } from "effect/testing"
import { createServer } from "node:http"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { boundedExportClient } from "../../src/telemetry/ExportClient.ts"
import { layerOtlp } from "../../src/telemetry/Tracing.ts"

const request = HttpClientRequest.post("http://collector.invalid/v1/traces")

/** A transport whose every request waits forever (counted), or answers `status`. */
const fakeTransport = (answer: "never" | number) => {
  let started = 0
  const client = HttpClient.make((req) => {
    started++
    return answer === "never"
      ? Effect.never
      : Effect.succeed(HttpClientResponse.fromWeb(req, new Response("{}", { status: answer, headers: { "retry-after": "600" } })))
  })
  return { client, started: () => started }
}

const transportReason = (exit: Exit.Exit<unknown, unknown>) => {
  if (!Exit.isFailure(exit)) return undefined
  const failure = exit.cause.reasons.find((r) => r._tag === "Fail")
  const error = failure?._tag === "Fail" ? failure.error : undefined
  return HttpClientError.isHttpClientError(error) && error.reason._tag === "TransportError" ? error.reason.description : undefined
}

/** A collector that reads each export and never answers; it counts the exports open at once. */
const hangingCollector = Effect.acquireRelease(
  Effect.promise(() =>
    new Promise<{ readonly url: string; readonly open: () => number; readonly most: () => number; readonly close: () => void }>((resolve) => {
      let open = 0
      let most = 0
      const held: Array<ServerResponse> = []
      const server = createServer((req: IncomingMessage, res: ServerResponse) => {
        open++
        most = Math.max(most, open)
        held.push(res)
        req.resume()
        res.on("close", () => open--)
      })
      server.listen(0, "127.0.0.1", () =>
        resolve({
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          open: () => open,
          most: () => most,
          close: () => {
            for (const res of held) res.destroy()
            server.closeAllConnections()
            server.close()
          }
        }))
    })
  ),
  (c) => Effect.sync(c.close)
)

describe("the OTLP exporter's client", () => {
  it.effect("runs at most maxInFlight attempts at once: another fails at once, and a slot frees when one ends", () =>
    Effect.gen(function*() {
      const transport = fakeTransport("never")
      const client = boundedExportClient(transport.client, { maxInFlight: 2, timeout: Duration.seconds(10) })
      const first = yield* Effect.forkChild(client.execute(request))
      const second = yield* Effect.forkChild(client.execute(request))
      yield* Effect.yieldNow
      const third = yield* Effect.exit(client.execute(request))
      assert.strictEqual(transport.started(), 2)
      assert.strictEqual(transportReason(third), "2 exports already in flight")

      yield* TestClock.adjust(Duration.seconds(10))
      assert.strictEqual(transportReason(yield* Fiber.await(first)), "no answer within 10s")
      assert.strictEqual(transportReason(yield* Fiber.await(second)), "no answer within 10s")
      // Both slots are free again: the next attempt reaches the transport.
      const fourth = yield* Effect.forkChild(client.execute(request))
      yield* Effect.yieldNow
      assert.strictEqual(transport.started(), 3)
      yield* Fiber.interrupt(fourth)
    }))

  it.effect("does not wait out a 429's Retry-After: it fails as a transport error", () =>
    Effect.gen(function*() {
      const transport = fakeTransport(429)
      const exit = yield* Effect.exit(boundedExportClient(transport.client).execute(request))
      assert.strictEqual(transportReason(exit), "the collector answered 429 (too many requests)")
    }))

  it.effect("passes a collector's answer through, body read", () =>
    Effect.gen(function*() {
      const transport = fakeTransport(200)
      const answer = yield* boundedExportClient(transport.client).execute(request)
      assert.strictEqual(answer.status, 200)
      assert.strictEqual(yield* answer.text, "{}")
    }))

  it.live("behind a collector that never answers, effect's exporter holds at most two exports open", () =>
    Effect.gen(function*() {
      const collector = yield* hangingCollector
      const tracer = layerOtlp({
        endpoint: collector.url,
        protocol: "http/json",
        capture: false,
        bounds: { maxInFlight: 2, timeout: Duration.seconds(30) }
      })
      yield* Effect.gen(function*() {
        // 6,000 spans: six full batches of 1,000, each an export started at once.
        for (let i = 0; i < 6_000; i++) yield* Effect.void.pipe(Effect.withSpan(`span ${i}`))
        // Long enough for every batch's export to have reached the collector if nothing held it back.
        yield* Effect.sleep(Duration.millis(500))
        assert.strictEqual(collector.most(), 2)
        // The collector goes away: the exports end, and closing the tracer does not wait on them.
        collector.close()
      }).pipe(Effect.provide(tracer))
    }), 20_000)
})
