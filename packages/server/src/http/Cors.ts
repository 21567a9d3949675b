/**
 * CORS for browser apps on another origin: `CORS_ORIGINS`, a comma-separated
 * list of origins (`https://app.example,https://admin.example`) or `*`.
 * Unset or empty: no CORS header is ever sent (same-origin and non-browser
 * clients need none).
 *
 * A listed origin is echoed with `Access-Control-Allow-Credentials: true`;
 * `*` answers `Access-Control-Allow-Origin: *` and never allows credentials
 * (browsers refuse the pair, and a wildcard must not grant them). Any other
 * origin gets no CORS header, so the browser keeps the answer from its page.
 */
import { Config } from "effect"
import { setting } from "../process/Setting.ts"

export interface CorsPolicy {
  /** Exact origins allowed (scheme://host[:port]); empty with `any` false: CORS off. */
  readonly origins: ReadonlySet<string>
  readonly any: boolean
}

export const CorsOff: CorsPolicy = { origins: new Set(), any: false }

const entriesOf = (value: string) => value.split(",").map((s) => s.trim().replace(/\/+$/, "")).filter((s) => s.length > 0)

export const parseCorsOrigins = (value: string): CorsPolicy => {
  const entries = entriesOf(value)
  return { origins: new Set(entries.filter((s) => s !== "*")), any: entries.includes("*") }
}

/** `*`, or origins as a browser sends them: `scheme://host[:port]`, no path (a trailing `/` is tolerated). */
const corsOrigins = (value: string) =>
  entriesOf(value).every((entry) => {
    if (entry === "*") return true
    try {
      return new URL(entry).origin === entry
    } catch {
      return false
    }
  })

export const CorsOriginsSetting = setting({
  name: "CORS_ORIGINS",
  expected: "* or a comma-separated list of origins such as https://app.example",
  accepts: corsOrigins,
  blankIsUnset: true
}, (name) => Config.String(name).pipe(Config.withDefault(""), Config.map(parseCorsOrigins)))

/** Request headers a browser app may send (the bearer token and the body's type). */
const ALLOWED_HEADERS = "authorization, content-type"
/** Response headers a page may read beyond the CORS-safelisted ones. */
const EXPOSED_HEADERS = "allow, retry-after"

/** Headers that let the page of `origin` read an answer; empty when it may not. */
export const corsHeaders = (policy: CorsPolicy, origin: string | undefined): Record<string, string> => {
  if (origin === undefined || (!policy.any && policy.origins.size === 0)) return {}
  if (policy.origins.has(origin)) {
    return {
      "access-control-allow-origin": origin,
      "access-control-allow-credentials": "true",
      "access-control-expose-headers": EXPOSED_HEADERS,
      vary: "Origin"
    }
  }
  if (policy.any) return { "access-control-allow-origin": "*", "access-control-expose-headers": EXPOSED_HEADERS }
  // Answers differ per origin: caches must not serve one origin's answer to another.
  return { vary: "Origin" }
}

/** The extra headers of a preflight (`OPTIONS` with `Access-Control-Request-Method`) from an allowed origin. */
export const preflightHeaders = (policy: CorsPolicy, origin: string | undefined, methods: string): Record<string, string> => {
  const base = corsHeaders(policy, origin)
  if (base["access-control-allow-origin"] === undefined) return base
  return {
    ...base,
    "access-control-allow-methods": methods,
    "access-control-allow-headers": ALLOWED_HEADERS,
    "access-control-max-age": "600"
  }
}

export const isPreflight = (method: string, headers: Record<string, string | undefined>) =>
  method === "OPTIONS" && headers["origin"] !== undefined && headers["access-control-request-method"] !== undefined
