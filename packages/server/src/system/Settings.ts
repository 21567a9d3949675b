/**
 * Every environment variable the server reads, what each accepts, checked
 * once before anything starts (`main.ts`): an invalid value stops the
 * process with one line per variable (`InvalidSetting.ts`) — never a warning
 * and a guessed default, never a stack trace. An unset variable takes its
 * default; a missing provider (`LLM_PROVIDER`, `LLM_MODEL`, `LLM_API_KEY`)
 * still starts the server, the chat route answering 502
 * `provider_not_configured` (docs/chat.md) — only a value that is set and
 * wrong refuses.
 *
 * The modules keep reading their own variables (with Effect Config, so tests
 * swap the provider); this table is what the process is held to. A variable
 * added to a module is added here too (`Settings.test.ts` finds the names
 * the sources read and fails on one missing from the table).
 */
import { accessSync, constants, statSync } from "node:fs"
import { resolve } from "node:path"
import { DEFAULT_MAX_RESPONSE_BYTES, MAX_MAX_RESPONSE_BYTES, MIN_MAX_RESPONSE_BYTES, providerNames, transportKinds } from "@switchboard/providers"
import { parseKey } from "../planner/CredentialKeys.ts"
import { parseRetention } from "../planner/DecisionRetention.ts"
import { MIN_SECRET_BYTES } from "../users/JwtAuth.ts"
import { CONSOLE_IMAGE_ORIGINS_EXPECTED, consoleImageOrigins } from "../http/ConsoleImageOrigins.ts"
import { OTLP_PROTOCOLS } from "../telemetry/Tracing.ts"
import { invalidSetting } from "../process/InvalidSetting.ts"

type Env = Readonly<Record<string, string | undefined>>

export interface Setting {
  readonly name: string
  /** What the variable accepts, as the refusal says it; absent: any value. */
  readonly expected?: string
  /** Whether `value` is accepted; `env` for settings that depend on another one. */
  readonly accepts?: (value: string, env: Env) => boolean | { readonly problem: string }
  /** A blank value means unset (the provider's and the sub-agents' variables, the credentials). */
  readonly blankIsUnset?: boolean
  /** A credential: a refusal never shows its value. */
  readonly secret?: boolean
}

const digits = (value: string) => /^\d{1,15}$/.test(value)
const wholeNumber = (min: number, max = Number.MAX_SAFE_INTEGER) => (value: string) =>
  digits(value) && Number(value) >= min && Number(value) <= max
const oneOf = (values: ReadonlyArray<string>) => (value: string) => values.includes(value)
const notBlank = (value: string) => value.trim() !== ""

const httpUrl = (value: string) => {
  try {
    const url = new URL(value)
    return url.protocol === "http:" || url.protocol === "https:"
  } catch {
    return false
  }
}

const postgresUrl = (value: string) => {
  try {
    const url = new URL(value)
    return url.protocol === "postgres:" || url.protocol === "postgresql:"
  } catch {
    return false
  }
}

/** `*`, or origins as a browser sends them: `scheme://host[:port]`, no path (a trailing `/` is tolerated). */
const corsOrigins = (value: string) =>
  value.split(",").map((s) => s.trim().replace(/\/+$/, "")).filter((s) => s !== "").every((entry) => {
    if (entry === "*") return true
    try {
      return new URL(entry).origin === entry
    } catch {
      return false
    }
  })


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

/** The sub-agents' switches (`SubagentConfig.ts` reads 1, true, yes, on as on; anything else as off). */
const FLAG = ["1", "0", "true", "false", "yes", "no", "on", "off"]
const flag = (value: string) => FLAG.includes(value.trim().toLowerCase())

const credentialKey = (name: string) => (value: string) => {
  const slot = parseKey(name, value)
  // The reason names the variable and says why ("it decodes to 12 bytes"), never the value.
  return slot._tag === "Key" ? true : { problem: slot.reason.replace(`${name} is `, "") }
}

/** With the scripted provider, its script must be a file the server can read. */
const scriptFile = (value: string, env: Env) => {
  if (env["LLM_PROVIDER"]?.trim() !== "scripted") return true
  const path = resolve(value.trim())
  try {
    if (!statSync(path).isFile()) return { problem: `${path} is not a file` }
    accessSync(path, constants.R_OK)
    return true
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return { problem: `the file ${path} cannot be read${code === undefined ? "" : ` (${code})`}` }
  }
}

const POSITIVE = "a whole number above 0"
const NON_NEGATIVE = "a whole number, 0 or more"
const PER_MINUTE = "a whole number of requests a minute above 0; unset: no limit"
const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "none"]

/** Grouped as the README's Configuration tables are. */
export const SETTINGS: ReadonlyArray<Setting> = [
  // Listening and the chat route
  { name: "HOST", expected: "a host name or IP address to listen on", accepts: notBlank },
  { name: "PORT", expected: "a port number from 1 to 65535", accepts: wholeNumber(1, 65535) },
  { name: "CHAT_TOKEN", secret: true, blankIsUnset: true },
  // Users (docs/users.md)
  {
    name: "AUTH_JWKS_URL",
    expected: "an http(s) URL of the product's JSON Web Key Set (not with AUTH_JWT_SECRET)",
    accepts: (value, env) => httpUrl(value) && (env.AUTH_JWT_SECRET ?? "").trim() === "",
    blankIsUnset: true
  },
  {
    name: "AUTH_JWT_SECRET",
    expected: `an HS256 secret of at least ${MIN_SECRET_BYTES} bytes`,
    accepts: (value) => Buffer.byteLength(value, "utf8") >= MIN_SECRET_BYTES,
    blankIsUnset: true,
    secret: true
  },
  { name: "AUTH_ISSUER", blankIsUnset: true },
  { name: "AUTH_AUDIENCE", blankIsUnset: true },
  { name: "CHAT_MAX_MESSAGES", expected: POSITIVE, accepts: wholeNumber(1) },
  { name: "CHAT_RPM", expected: PER_MINUTE, accepts: wholeNumber(1) },
  { name: "MAX_CONCURRENT_TURNS", expected: `${POSITIVE} (default 5000)`, accepts: wholeNumber(1) },
  { name: "PLANNER_MAX_CONCURRENT_DECISIONS", expected: `${POSITIVE} (default 5000)`, accepts: wholeNumber(1) },
  {
    name: "CORS_ORIGINS",
    expected: "* or a comma-separated list of origins such as https://app.example",
    accepts: corsOrigins,
    blankIsUnset: true
  },
  // Database
  { name: "DATABASE_URL", expected: "a postgres:// URL", accepts: postgresUrl, secret: true },
  { name: "DATABASE_WAIT_SECONDS", expected: NON_NEGATIVE, accepts: wholeNumber(0) },
  { name: "DATABASE_MAX_CONNECTIONS", expected: POSITIVE, accepts: wholeNumber(1) },
  { name: "DATA_DIR", expected: "a directory path", accepts: notBlank },
  // The chat route's provider
  { name: "LLM_PROVIDER", expected: providerNames.join(", "), accepts: oneOf(providerNames), blankIsUnset: true },
  { name: "LLM_MODEL", blankIsUnset: true },
  { name: "LLM_API_KEY", secret: true, blankIsUnset: true },
  { name: "LLM_BASE_URL", expected: "an http(s) URL such as https://api.openai.com/v1", accepts: httpUrl, blankIsUnset: true },
  { name: "LLM_TIMEOUT_MS", expected: "a whole number of milliseconds above 0", accepts: wholeNumber(1), blankIsUnset: true },
  { name: "LLM_TRANSPORT", expected: transportKinds.join(" or "), accepts: oneOf(transportKinds), blankIsUnset: true },
  { name: "LLM_TRANSCRIPTION_MODEL", blankIsUnset: true },
  { name: "LLM_MAX_TOKENS", expected: POSITIVE, accepts: wholeNumber(1), blankIsUnset: true },
  // Read by the planner's provider pools too: it bounds every provider answer the server reads.
  {
    name: "LLM_MAX_RESPONSE_BYTES",
    expected: `a whole number of bytes from ${MIN_MAX_RESPONSE_BYTES} to ${MAX_MAX_RESPONSE_BYTES} (default ${DEFAULT_MAX_RESPONSE_BYTES}, 4 MiB)`,
    accepts: wholeNumber(MIN_MAX_RESPONSE_BYTES, MAX_MAX_RESPONSE_BYTES),
    blankIsUnset: true
  },
  { name: "LLM_SCRIPT", expected: "the path of a readable script file", accepts: scriptFile, blankIsUnset: true },
  // Observability and the runtime
  { name: "LOG_LEVEL", expected: LOG_LEVELS.join(", "), accepts: oneOf(LOG_LEVELS) },
  { name: "LOG_FORMAT", expected: "pretty or json", accepts: oneOf(["pretty", "json"]) },
  { name: "TRACING", expected: "on or off", accepts: oneOf(["on", "off"]) },
  {
    name: "OTEL_EXPORTER_OTLP_ENDPOINT",
    expected: "an http(s) URL of an OTLP/HTTP collector such as http://127.0.0.1:4318 (traces go to {endpoint}/v1/traces)",
    accepts: httpUrl,
    blankIsUnset: true
  },
  { name: "OTEL_EXPORTER_OTLP_PROTOCOL", expected: OTLP_PROTOCOLS.join(" or "), accepts: oneOf(OTLP_PROTOCOLS) },
  { name: "OTEL_CAPTURE_CONTENT", expected: "on or off", accepts: oneOf(["on", "off"]) },
  { name: "OTEL_SERVICE_NAME", blankIsUnset: true },
  {
    name: "OTEL_RESOURCE_ATTRIBUTES",
    expected: "comma-separated key=value pairs such as deployment.environment=prod,team=media",
    accepts: resourceAttributes,
    blankIsUnset: true
  },
  { name: "METRICS_TOKEN", secret: true, blankIsUnset: true },
  { name: "SCHEMA_JIT", expected: "on or off", accepts: oneOf(["on", "off"]) },
  { name: "PRETENURING", expected: "on or off", accepts: oneOf(["on", "off"]) },
  { name: "HEAP_GROWING_PERCENT", expected: "a whole number of percent, 0 to 9999; 0: V8's own growth", accepts: wholeNumber(0, 9999) },
  // Agents
  {
    name: "DEFAULT_AGENT",
    expected: "an agent name: 1 to 64 of a-z, 0-9, - and _ (default media-editor)",
    accepts: (value) => /^[a-z0-9_-]{1,64}$/.test(value),
    blankIsUnset: true
  },
  // Jobs and sub-agents
  { name: "JOB_CONCURRENCY", expected: POSITIVE, accepts: wholeNumber(1) },
  { name: "JOB_TIMEOUT_MS", expected: "a whole number of milliseconds above 0", accepts: wholeNumber(1) },
  { name: "JOB_LEASE_MS", expected: "a whole number of milliseconds above 0", accepts: wholeNumber(1) },
  { name: "JOB_SWEEP_MS", expected: "a whole number of milliseconds above 0", accepts: wholeNumber(1) },
  { name: "JOB_MODEL_RESEARCH", blankIsUnset: true },
  { name: "JOB_MODEL_DEMO", blankIsUnset: true },
  { name: "JOB_MODEL_VISUAL", blankIsUnset: true },
  { name: "SEARCH_URL", expected: "an http(s) URL of a SearXNG-compatible JSON search API", accepts: httpUrl, blankIsUnset: true },
  { name: "FETCH_ALLOW_PRIVATE", expected: "1 or 0 (true/false, yes/no, on/off)", accepts: flag, blankIsUnset: true },
  { name: "CHROMIUM_PATH", blankIsUnset: true },
  // The web console: a directory the server reads its build from (docs/console.md); a missing one serves no console.
  { name: "WEB_DIR", blankIsUnset: true },
  // Where the console may load a markdown image from besides itself (docs/users.md#no-leak-through-the-page).
  {
    name: "CONSOLE_IMAGE_ORIGINS",
    expected: CONSOLE_IMAGE_ORIGINS_EXPECTED,
    accepts: (value) => consoleImageOrigins(value) !== undefined,
    blankIsUnset: true
  },
  { name: "JOB_VISUAL_VISION", expected: "1 or 0 (true/false, yes/no, on/off)", accepts: flag, blankIsUnset: true },
  { name: "TURN_MARKER_GRACE_MS", expected: NON_NEGATIVE, accepts: wholeNumber(0) },
  // Hosts and the planner
  { name: "ADMIN_TOKEN", secret: true, blankIsUnset: true },
  {
    name: "PLANNER_HOST_DAILY_TOKENS",
    expected: "a whole number of tokens, 0 or more (a host's default budget per 24 hours; unset: none)",
    accepts: wholeNumber(0),
    blankIsUnset: true
  },
  {
    name: "USER_DAILY_TOKENS",
    expected: "a whole number of tokens, 0 or more (every user's budget per 24 hours; unset: none)",
    accepts: wholeNumber(0),
    blankIsUnset: true
  },
  {
    name: "CREDENTIAL_KEY",
    expected: "base64 of 32 random bytes, e.g. from: openssl rand -base64 32",
    accepts: credentialKey("CREDENTIAL_KEY"),
    blankIsUnset: true,
    secret: true
  },
  {
    name: "CREDENTIAL_KEY_PREVIOUS",
    expected: "base64 of 32 bytes: the key before a rotation",
    accepts: credentialKey("CREDENTIAL_KEY_PREVIOUS"),
    blankIsUnset: true,
    secret: true
  },
  {
    name: "PLANNER_DECISION_RETENTION",
    expected: "N seconds, N minutes, N hours or N days",
    accepts: (value) => parseRetention(value) !== undefined
  },
  { name: "PLANNER_PRUNE_INTERVAL_SECONDS", expected: POSITIVE, accepts: wholeNumber(1) },
  { name: "PLANNER_PRUNE_BATCH_SIZE", expected: POSITIVE, accepts: wholeNumber(1) },
  { name: "PLANNER_PRUNE_BATCH_MILLIS", expected: POSITIVE, accepts: wholeNumber(1) },
  { name: "PLANNER_HOST_RPM", expected: PER_MINUTE, accepts: wholeNumber(1) },
  { name: "TASK_LEASE_SECONDS", expected: "a whole number of seconds from 1 to 86400", accepts: wholeNumber(1, 86_400) }
]

export const settingNamed = (name: string): Setting | undefined => SETTINGS.find((s) => s.name === name)

/** The line of each invalid setting in `env`, in the table's order; empty when all are fine. */
export const invalidSettings = (env: Env): ReadonlyArray<string> => {
  const lines: Array<string> = []
  for (const setting of SETTINGS) {
    const value = env[setting.name]
    if (value === undefined || setting.accepts === undefined) continue
    if (setting.blankIsUnset === true && value.trim() === "") continue
    const verdict = setting.accepts(setting.blankIsUnset === true ? value.trim() : value, env)
    if (verdict === true) continue
    lines.push(invalidSetting(setting.name, value, setting.expected ?? "another value", {
      ...(setting.secret === true ? { secret: true } : {}),
      ...(typeof verdict === "object" ? { problem: verdict.problem } : {})
    }))
  }
  return lines
}
