/**
 * Which provider the chat route talks to, from server-side configuration
 * (docs/configuration.md, Chat provider).
 *
 * | variable                  | meaning                                                                   |
 * | ------------------------- | ------------------------------------------------------------------------- |
 * | `LLM_PROVIDER`            | required: `openai-compatible`, `anthropic` or `scripted`                  |
 * | `LLM_MODEL`               | required                                                                  |
 * | `LLM_API_KEY`             | required (for every provider; `scripted` ignores its value)               |
 * | `LLM_BASE_URL`            | optional, includes `/v1`; the default depends on the provider (below)     |
 * | `LLM_TIMEOUT_MS`          | optional, default 60000: deadline of one provider call                    |
 * | `LLM_TRANSPORT`           | openai-compatible only: `undici` (default, pooled) or `sdk` (`openai`)    |
 * | `LLM_TRANSCRIPTION_MODEL` | openai-compatible only, default `whisper-1` (anthropic: no transcription) |
 * | `LLM_MAX_TOKENS`          | anthropic only, default 4096: `max_tokens` of every request               |
 * | `LLM_MAX_RESPONSE_BYTES`  | optional, default 4194304 (4 MiB): the most read of one answer            |
 * | `LLM_SCRIPT`              | the script file, required with `scripted` (format: `Scripted.ts`)         |
 *
 * Default `LLM_BASE_URL`: `https://api.openai.com/v1` for `openai-compatible`
 * (`{base}/chat/completions`), `https://api.anthropic.com/v1` for `anthropic`
 * (`{base}/messages`).
 *
 * The server starts without any of them: `layer` always builds, and
 * when the configuration is incomplete or invalid its adapter fails every call
 * with `NotConfigured` naming the variables to fix. An empty value counts as
 * missing (a `LLM_API_KEY=` line in an env file is not a key).
 */
import { Config, Effect, Layer, Option, Redacted } from "effect"
import * as Anthropic from "./anthropic/Anthropic.ts"
import type { AnthropicSettings } from "./anthropic/Anthropic.ts"
import { transportKinds } from "./openai/ChatCompletionsTransport.ts"
import type { TransportKind } from "./openai/ChatCompletionsTransport.ts"
import * as NotConfigured from "./NotConfigured.ts"
import * as OpenAiCompatible from "./openai/OpenAiCompatible.ts"
import { MAX_MAX_RESPONSE_BYTES, MIN_MAX_RESPONSE_BYTES, responseLimitFor } from "./ResponseLimit.ts"
import type { OpenAiCompatibleSettings } from "./openai/OpenAiCompatible.ts"
import type { ProviderAdapter, ProviderError, Transcriber } from "./ProviderAdapter.ts"
import { displayUrl } from "./Redact.ts"
import * as Scripted from "./scripted/Scripted.ts"

/** The values the contract names. */
export const providerNames = ["openai-compatible", "anthropic", "scripted"] as const

/** The raw variables, each absent when unset or blank. */
export interface ProviderEnv {
  readonly LLM_PROVIDER?: string
  readonly LLM_MODEL?: string
  readonly LLM_API_KEY?: Redacted.Redacted<string>
  readonly LLM_BASE_URL?: string
  readonly LLM_TIMEOUT_MS?: string
  readonly LLM_TRANSPORT?: string
  readonly LLM_TRANSCRIPTION_MODEL?: string
  readonly LLM_MAX_TOKENS?: string
  readonly LLM_MAX_RESPONSE_BYTES?: string
  readonly LLM_SCRIPT?: string
}

/** The outcome of reading the configuration: what `layer` builds. */
export type ResolvedProvider =
  | { readonly kind: "openai-compatible"; readonly settings: OpenAiCompatibleSettings }
  | { readonly kind: "anthropic"; readonly settings: AnthropicSettings }
  | { readonly kind: "scripted"; readonly model: string; readonly scriptPath: string }
  | { readonly kind: "not-configured"; readonly error: ProviderError }

const notConfigured = (error: ProviderError): ResolvedProvider => ({ kind: "not-configured", error })

const invalid = (name: string, value: string, expected: string): ProviderError =>
  NotConfigured.notConfigured([name], `invalid ${name} ${JSON.stringify(value)} (expected ${expected})`)

/** `raw`, or the provider's own default when unset. */
const parseBaseUrl = (raw: string | undefined, defaultUrl: string): string | ProviderError => {
  if (raw === undefined) return defaultUrl
  try {
    const url = new URL(raw)
    if (url.protocol === "http:" || url.protocol === "https:") return raw.replace(/\/+$/, "")
  } catch {
    // reported below
  }
  return invalid("LLM_BASE_URL", raw, `an http(s) URL such as ${defaultUrl}`)
}

const positiveInteger = (raw: string): number | undefined => {
  const n = Number(raw)
  return /^\d+$/.test(raw) && n > 0 && Number.isSafeInteger(n) ? n : undefined
}

const parseTimeout = (raw: string | undefined): number | ProviderError => {
  if (raw === undefined) return OpenAiCompatible.DEFAULT_TIMEOUT_MS
  return positiveInteger(raw) ?? invalid("LLM_TIMEOUT_MS", raw, "a positive number of milliseconds")
}

const parseMaxTokens = (raw: string | undefined): number | ProviderError => {
  if (raw === undefined) return Anthropic.DEFAULT_MAX_TOKENS
  return positiveInteger(raw) ?? invalid("LLM_MAX_TOKENS", raw, "a positive integer")
}

const parseMaxResponseBytes = (raw: string | undefined): number | ProviderError => {
  const limit = responseLimitFor({ LLM_MAX_RESPONSE_BYTES: raw })
  return limit._tag === "Bytes"
    ? limit.bytes
    : invalid("LLM_MAX_RESPONSE_BYTES", raw ?? "", `a whole number of bytes from ${MIN_MAX_RESPONSE_BYTES} to ${MAX_MAX_RESPONSE_BYTES}`)
}

const parseTransport = (raw: string | undefined): TransportKind | ProviderError => {
  if (raw === undefined) return "undici"
  const kind = transportKinds.find((k) => k === raw)
  return kind ?? invalid("LLM_TRANSPORT", raw, transportKinds.join(" or "))
}

/**
 * The pure selection: which adapter the variables call for, or why none can be
 * built. Missing required variables are reported together, in the order
 * LLM_PROVIDER, LLM_MODEL, LLM_API_KEY; an invalid value after that.
 */
export const resolveProvider = (env: ProviderEnv): ResolvedProvider => {
  const { LLM_PROVIDER: provider, LLM_MODEL: model, LLM_API_KEY: apiKey } = env
  if (provider === undefined || model === undefined || apiKey === undefined) {
    return notConfigured(NotConfigured.missingVariables([
      ...(provider === undefined ? ["LLM_PROVIDER"] : []),
      ...(model === undefined ? ["LLM_MODEL"] : []),
      ...(apiKey === undefined ? ["LLM_API_KEY"] : [])
    ]))
  }
  switch (provider) {
    case "openai-compatible": {
      const baseUrl = parseBaseUrl(env.LLM_BASE_URL, OpenAiCompatible.DEFAULT_BASE_URL)
      if (typeof baseUrl !== "string") return notConfigured(baseUrl)
      const timeoutMs = parseTimeout(env.LLM_TIMEOUT_MS)
      if (typeof timeoutMs !== "number") return notConfigured(timeoutMs)
      const transport = parseTransport(env.LLM_TRANSPORT)
      if (typeof transport !== "string") return notConfigured(transport)
      const maxResponseBytes = parseMaxResponseBytes(env.LLM_MAX_RESPONSE_BYTES)
      if (typeof maxResponseBytes !== "number") return notConfigured(maxResponseBytes)
      return {
        kind: "openai-compatible",
        settings: {
          model,
          baseUrl,
          apiKey,
          timeoutMs,
          transport,
          maxResponseBytes,
          transcriptionModel: env.LLM_TRANSCRIPTION_MODEL ?? OpenAiCompatible.DEFAULT_TRANSCRIPTION_MODEL
        }
      }
    }
    case "scripted":
      return env.LLM_SCRIPT === undefined
        ? notConfigured(NotConfigured.missingVariables(["LLM_SCRIPT"]))
        : { kind: "scripted", model, scriptPath: env.LLM_SCRIPT }
    case "anthropic": {
      // LLM_TRANSPORT and LLM_TRANSCRIPTION_MODEL are the openai-compatible provider's: ignored here.
      const baseUrl = parseBaseUrl(env.LLM_BASE_URL, Anthropic.DEFAULT_BASE_URL)
      if (typeof baseUrl !== "string") return notConfigured(baseUrl)
      const timeoutMs = parseTimeout(env.LLM_TIMEOUT_MS)
      if (typeof timeoutMs !== "number") return notConfigured(timeoutMs)
      const maxTokens = parseMaxTokens(env.LLM_MAX_TOKENS)
      if (typeof maxTokens !== "number") return notConfigured(maxTokens)
      const maxResponseBytes = parseMaxResponseBytes(env.LLM_MAX_RESPONSE_BYTES)
      if (typeof maxResponseBytes !== "number") return notConfigured(maxResponseBytes)
      return { kind: "anthropic", settings: { model, baseUrl, apiKey, timeoutMs, maxTokens, maxResponseBytes } }
    }
    default:
      return notConfigured(invalid("LLM_PROVIDER", provider, providerNames.join(", ")))
  }
}

// ---------------------------------------------------------------------------
// Reading the variables with Effect Config (tests swap the ConfigProvider)

const isBlank = (s: string) => s.trim() === ""

/** An optional variable; blank or unreadable counts as absent (the operator sees it as missing). */
const optionalString = (name: string) =>
  Config.option(Config.String(name)).pipe(
    Config.map(Option.filter((s: string) => !isBlank(s))),
    Config.map(Option.map((s: string) => s.trim())),
    Effect.orElseSucceed(() => Option.none<string>())
  )

const optionalRedacted = (name: string) =>
  Config.option(Config.Redacted(name)).pipe(
    Config.map(Option.filter((r: Redacted.Redacted<string>) => !isBlank(Redacted.value(r)))),
    Effect.orElseSucceed(() => Option.none<Redacted.Redacted<string>>())
  )

const stringNames = [
  "LLM_PROVIDER",
  "LLM_MODEL",
  "LLM_BASE_URL",
  "LLM_TIMEOUT_MS",
  "LLM_TRANSPORT",
  "LLM_TRANSCRIPTION_MODEL",
  "LLM_MAX_TOKENS",
  "LLM_MAX_RESPONSE_BYTES",
  "LLM_SCRIPT"
] as const

/** Every variable this package reads: the server holds each to a rule at start (its test checks it has one). */
export const providerVariables: ReadonlyArray<string> = [...stringNames, "LLM_API_KEY"]

/** The variables from the current ConfigProvider (the environment, by default). */
export const readProviderEnv: Effect.Effect<ProviderEnv> = Effect.gen(function*() {
  const env: Record<string, string | Redacted.Redacted<string>> = {}
  for (const name of stringNames) {
    const value = yield* optionalString(name)
    if (Option.isSome(value)) env[name] = value.value
  }
  const apiKey = yield* optionalRedacted("LLM_API_KEY")
  if (Option.isSome(apiKey)) env["LLM_API_KEY"] = apiKey.value
  return env as ProviderEnv
})

/** Read and resolve: the testable "which adapter does the route get" step. */
export const loadProvider: Effect.Effect<ResolvedProvider> = Effect.map(readProviderEnv, resolveProvider)

/** The layer of a resolved provider. */
export const layerFor = (resolved: ResolvedProvider): Layer.Layer<ProviderAdapter | Transcriber> => {
  switch (resolved.kind) {
    case "openai-compatible":
      return OpenAiCompatible.layer(resolved.settings)
    case "anthropic":
      return Anthropic.layer(resolved.settings)
    case "scripted":
      return Scripted.layer(resolved.scriptPath)
    case "not-configured":
      return NotConfigured.layer(resolved.error)
  }
}

/**
 * `ProviderAdapter` and `Transcriber`, chosen by configuration. Never fails to
 * build: a missing or invalid configuration yields the `NotConfigured` adapter.
 */
export const layer: Layer.Layer<ProviderAdapter | Transcriber> = Layer.unwrap(
  loadProvider.pipe(
    // One line at startup, so a misconfiguration shows before the first chat call fails.
    Effect.tap((resolved) => {
      switch (resolved.kind) {
        case "openai-compatible":
          return Effect.logInfo(
            `LLM provider: openai-compatible, model ${resolved.settings.model} at ${displayUrl(resolved.settings.baseUrl)} (transport ${resolved.settings.transport})`
          )
        case "anthropic":
          return Effect.logInfo(
            `LLM provider: anthropic, model ${resolved.settings.model} at ${displayUrl(resolved.settings.baseUrl)} (max_tokens ${resolved.settings.maxTokens}; no transcription)`
          )
        case "scripted":
          return Effect.void // the script's layer says whether it could be read (`Scripted.layer`)
        case "not-configured":
          return Effect.logWarning(`${resolved.error.message}; chat and transcription calls will fail with 502`)
      }
    }),
    Effect.map(layerFor)
  )
)
