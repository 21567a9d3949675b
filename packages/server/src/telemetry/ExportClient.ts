/**
 * The HTTP client the OTLP exporter posts its batches through, bounded
 * (docs/observability.md). Effect's exporter starts an export for every full
 * batch with no limit on how many are pending, waits for an answer as long as
 * `fetch` does (minutes), and honours any `Retry-After`: behind a collector
 * that accepts connections and never answers, or asks for a long back-off,
 * every batch would stay in memory until the process ran out of it.
 *
 * Here each attempt has a deadline, at most `maxInFlight` attempts run at
 * once, and a 429 is not waited out. An attempt refused so, or past its
 * deadline, fails as a transport error: the exporter retries it a few times,
 * a second apart, then drops its buffer and rests for a minute. So a
 * collector that is down or stuck costs dropped spans and a bounded amount of
 * memory, never a request.
 */
import { Duration, Effect } from "effect"
import { HttpClient, HttpClientError } from "effect/http"
import type { HttpClientRequest } from "effect/http"

export interface ExportBounds {
  /** Attempts posting at once; another fails at once. */
  readonly maxInFlight: number
  /** How long one attempt may take, connection to its whole answer. */
  readonly timeout: Duration.Input
}

export const EXPORT_BOUNDS: ExportBounds = { maxInFlight: 2, timeout: Duration.seconds(10) }

export const boundedExportClient = (client: HttpClient.HttpClient, bounds: ExportBounds = EXPORT_BOUNDS): HttpClient.HttpClient => {
  let inFlight = 0
  const refused = (request: HttpClientRequest.HttpClientRequest, description: string) =>
    new HttpClientError.HttpClientError({ reason: new HttpClientError.TransportError({ request, description }) })
  return HttpClient.transform(client, (response, request) =>
    Effect.suspend(() => {
      if (inFlight >= bounds.maxInFlight) {
        return Effect.fail(refused(request, `${inFlight} exports already in flight`))
      }
      inFlight++
      return response.pipe(
        // The whole answer within the deadline: a collector may send its headers and stall the body.
        Effect.tap((answer) => answer.arrayBuffer),
        Effect.timeoutOrElse({
          duration: bounds.timeout,
          orElse: () => Effect.fail(refused(request, `no answer within ${Duration.format(Duration.fromInputUnsafe(bounds.timeout))}`))
        }),
        Effect.flatMap((answer) =>
          answer.status === 429 ? Effect.fail(refused(request, "the collector answered 429 (too many requests)")) : Effect.succeed(answer)
        ),
        Effect.ensuring(Effect.sync(() => {
          inFlight--
        }))
      )
    }))
}
