/**
 * Where spans go (docs/observability.md). `OTEL_EXPORTER_OTLP_ENDPOINT` (an
 * http(s) URL, e.g. `http://127.0.0.1:4318`) turns tracing on and exports the
 * spans over OTLP/HTTP to `{endpoint}/v1/traces` — protobuf, or JSON with
 * `OTEL_EXPORTER_OTLP_PROTOCOL=http/json` — as service `OTEL_SERVICE_NAME`
 * (default `switchboard`). Unset, tracing is what `TRACING` says (off by
 * default: see `Server.ts`'s `layerObservability`), and nothing is exported.
 *
 * Without `OTEL_CAPTURE_CONTENT=on`, what leaves the process carries no
 * content: the GenAI spans add none (`GenAi.ts`), and every exported span is
 * held to it here — a failure is exported as its kind (`ProviderError`,
 * reason `Status`), never its message or stack (a provider's error may quote
 * the request), and log lines are not added to spans as events (a log line
 * may name what the operator's log may hold). The probes and `/metrics` make
 * no span: a scrape every few seconds is not a trace anyone wants.
 */
import { Config, Effect, Exit, Layer, References, Tracer } from "effect"
import { FetchHttpClient, HttpClient, HttpMiddleware } from "effect/http"
import { OtlpExporter, OtlpSerialization, OtlpTracer } from "effect/observability"
import { boundedExportClient } from "./ExportClient.ts"
import type { ExportBounds } from "./ExportClient.ts"
import { CaptureContent } from "./GenAi.ts"
import {
  CaptureContentSetting,
  OTLP_PROTOCOLS,
  OtlpEndpointSetting,
  OtlpProtocolSetting,
  ServiceNameSetting,
  TracingSetting
} from "./TelemetrySettings.ts"

export const TracingConfig = Config.all({
  tracing: TracingSetting.config,
  endpoint: OtlpEndpointSetting.config,
  protocol: OtlpProtocolSetting.config,
  capture: CaptureContentSetting.config,
  serviceName: ServiceNameSetting.config
})

/** `{endpoint}/v1/traces`, the OTLP/HTTP path of traces under a base endpoint (one trailing `/` tolerated). */
export const tracesUrl = (endpoint: string) => `${endpoint.trim().replace(/\/+$/, "")}/v1/traces`

/** Paths whose requests make no span: the server's is left out here, the handlers' own statements by `untraced`. */
const UNTRACED = new Set(["/metrics", "/healthz", "/readyz"])

/** Whether a request (its URL, query and all) is to one of the untraced paths. */
export const isUntraced = (url: string) => {
  const query = url.indexOf("?")
  return UNTRACED.has(query === -1 ? url : url.slice(0, query))
}

/** A probe's or a scrape's work (its statements): no trace of its own, whatever tracing is on. */
export const untraced = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.withTracerEnabled(effect, false)

/** A failure as exported without content: its kind only (and a provider error's reason and status). */
const kindOf = (error: unknown): Error => {
  const tagged = error as { _tag?: unknown; name?: unknown; reason?: unknown; status?: unknown } | null
  const kind = typeof tagged?._tag === "string" ? tagged._tag : typeof tagged?.name === "string" ? tagged.name : typeof error
  const reason = typeof tagged?.reason === "string" ? ` (${tagged.reason}${typeof tagged.status === "number" ? ` ${tagged.status}` : ""})` : ""
  const exported = new Error(`${kind}${reason}`)
  exported.name = kind
  exported.stack = ""
  return exported
}

const withoutContent = (exit: Exit.Exit<unknown, unknown>): Exit.Exit<unknown, unknown> => {
  if (exit._tag === "Success") return exit
  const reasons = exit.cause.reasons
  const failure = reasons.find((r) => r._tag === "Fail" || r._tag === "Die")
  // Interrupted only: kept as it is (exported as interrupted, with no message).
  if (failure === undefined) return exit
  return failure._tag === "Fail" ? Exit.fail(kindOf(failure.error)) : Exit.die(kindOf(failure.defect))
}

/** The tracer's spans, held to carrying no content (see the module's comment). */
export const withoutContentTracer = (tracer: Tracer.Tracer): Tracer.Tracer =>
  Tracer.make({
    span(options) {
      const span = tracer.span(options)
      const end = span.end.bind(span)
      Object.assign(span, {
        end: (endTime: bigint, exit: Exit.Exit<unknown, unknown>) => end(endTime, withoutContent(exit)),
        event: () => {}
      })
      return span
    },
    ...(tracer.context === undefined ? {} : { context: tracer.context })
  })

/** The OTLP exporter of traces, as `Tracer`. */
export const layerOtlp = (options: {
  readonly endpoint: string
  readonly protocol: typeof OTLP_PROTOCOLS[number]
  readonly capture: boolean
  readonly serviceName?: string | undefined
  readonly bounds?: ExportBounds
}) =>
  Layer.effect(
    Tracer.Tracer,
    OtlpTracer.make({ url: tracesUrl(options.endpoint), resource: { serviceName: options.serviceName ?? "switchboard" } }).pipe(
      Effect.map((tracer) => options.capture ? tracer : withoutContentTracer(tracer))
    )
  ).pipe(
    Layer.provide([
      OtlpExporter.layerFlusher,
      options.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf,
      Layer.effect(HttpClient.HttpClient, Effect.map(Effect.service(HttpClient.HttpClient), (client) => boundedExportClient(client, options.bounds)))
        .pipe(Layer.provide(FetchHttpClient.layer))
    ])
  )

/** Tracing as configured: on with an endpoint (exported) or with `TRACING=on` (recorded only); content capture. */
export const layer = Layer.unwrap(Effect.gen(function*() {
  const config = yield* TracingConfig
  const capture = config.capture === "on"
  const base = Layer.mergeAll(
    Layer.succeed(References.TracerEnabled, config.tracing === "on" || config.endpoint !== undefined),
    Layer.succeed(CaptureContent, capture)
  )
  if (config.endpoint === undefined) return base
  return Layer.mergeAll(
    base,
    layerOtlp({ endpoint: config.endpoint, protocol: config.protocol, capture, serviceName: config.serviceName }),
    Layer.succeed(HttpMiddleware.TracerDisabledWhen, (request) => isUntraced(request.url))
  )
}))
