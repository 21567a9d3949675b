/**
 * Where spans go and who may read `/metrics` (docs/observability.md): read by
 * `Tracing.ts` and `MetricsHttp.ts`; `OTEL_RESOURCE_ATTRIBUTES` by Effect's
 * OTLP exporter itself, so only its rule is here.
 */
import { Config, Option, Redacted } from "effect"
import { httpUrl, ON_OFF, oneOf } from "../process/Accepts.ts"
import { setting } from "../process/Setting.ts"
import { settingRule } from "../process/SettingRule.ts"

/** `OTEL_EXPORTER_OTLP_PROTOCOL`'s values (gRPC is not spoken: OTLP over HTTP only). */
export const OTLP_PROTOCOLS = ["http/protobuf", "http/json"] as const

const onOff = (name: string) =>
  setting({ name, expected: ON_OFF.join(" or "), accepts: oneOf(ON_OFF) }, (variable) =>
    Config.Literals(["on", "off"], variable).pipe(Config.withDefault("off")))

/** Unset when blank; not trimmed (the endpoint is, where it becomes a URL). */
const optional = (name: string) =>
  Config.option(Config.String(name)).pipe(Config.map(Option.filter((s: string) => s.trim() !== "")), Config.map(Option.getOrUndefined))

export const TracingSetting = onOff("TRACING")

export const OtlpEndpointSetting = setting({
  name: "OTEL_EXPORTER_OTLP_ENDPOINT",
  expected: "an http(s) URL of an OTLP/HTTP collector such as http://127.0.0.1:4318 (traces go to {endpoint}/v1/traces)",
  accepts: httpUrl,
  blankIsUnset: true
}, optional)

export const OtlpProtocolSetting = setting(
  { name: "OTEL_EXPORTER_OTLP_PROTOCOL", expected: OTLP_PROTOCOLS.join(" or "), accepts: oneOf(OTLP_PROTOCOLS) },
  (name) => Config.Literals(OTLP_PROTOCOLS, name).pipe(Config.withDefault("http/protobuf"))
)

export const CaptureContentSetting = onOff("OTEL_CAPTURE_CONTENT")

export const ServiceNameSetting = setting({ name: "OTEL_SERVICE_NAME", blankIsUnset: true }, optional)

/** OpenTelemetry's `key=value,key=value` (values may be percent-encoded). */
const resourceAttributes = (value: string) =>
  value.split(",").every((pair) => {
    const at = pair.indexOf("=")
    if (at <= 0 || pair.slice(0, at).trim() === "") return false
    try {
      decodeURIComponent(pair.slice(at + 1))
      return true
    } catch {
      return false
    }
  })

export const ResourceAttributesRule = settingRule({
  name: "OTEL_RESOURCE_ATTRIBUTES",
  expected: "comma-separated key=value pairs such as deployment.environment=prod,team=media",
  accepts: resourceAttributes,
  blankIsUnset: true
})

/** Blank: unset, `/metrics` open. */
export const MetricsTokenSetting = setting({ name: "METRICS_TOKEN", secret: true, blankIsUnset: true }, (name) =>
  Config.option(Config.Redacted(name)).pipe(
    Config.map((token) => Option.isSome(token) && Redacted.value(token.value).trim() !== "" ? Redacted.value(token.value).trim() : undefined)
  ))
