import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Redacted } from "effect"
import { fileURLToPath } from "node:url"
import { ProviderAdapter, Transcriber } from "../src/ProviderAdapter.ts"
import * as ProviderConfig from "../src/ProviderConfig.ts"
import { loadProvider, resolveProvider } from "../src/ProviderConfig.ts"
import type { ResolvedProvider } from "../src/ProviderConfig.ts"
import * as FakeAnthropic from "../src/testing/FakeAnthropic.ts"
import * as FakeOpenAi from "../src/testing/FakeOpenAi.ts"
import { params, user } from "./Messages.ts"

const demoScript = fileURLToPath(new URL("../../../examples/scripted-demo.json", import.meta.url))

const withEnv = (env: Record<string, string>) => ConfigProvider.layer(ConfigProvider.fromUnknown(env))

const load = (env: Record<string, string>) => loadProvider.pipe(Effect.provide(withEnv(env)))

/** The provider layer as the server builds it, from `env`. */
const providerFrom = (env: Record<string, string>) => ProviderConfig.layer.pipe(Layer.provide(withEnv(env)))

const chatFailure = (env: Record<string, string>) =>
  ProviderAdapter.use((adapter) => adapter.chat(params([user("hi")]))).pipe(Effect.provide(providerFrom(env)), Effect.flip)

const notConfiguredError = (resolved: ResolvedProvider) => {
  if (resolved.kind !== "not-configured") return assert.fail(`expected not-configured, got ${resolved.kind}`)
  return resolved.error
}

const complete = { LLM_PROVIDER: "openai-compatible", LLM_MODEL: "gpt-test", LLM_API_KEY: "sk-config-test" }

const anthropic = { LLM_PROVIDER: "anthropic", LLM_MODEL: "claude-test", LLM_API_KEY: "sk-ant-config-test" }

describe("ProviderConfig: selection", () => {
  it.effect("Adapter selected by config", () =>
    Effect.gen(function*() {
      const resolved = yield* load(complete)
      assert.strictEqual(resolved.kind, "openai-compatible")
      if (resolved.kind !== "openai-compatible") return
      assert.deepStrictEqual({ ...resolved.settings, apiKey: Redacted.value(resolved.settings.apiKey) }, {
        model: "gpt-test",
        baseUrl: "https://api.openai.com/v1",
        apiKey: "sk-config-test",
        timeoutMs: 60_000,
        transport: "undici",
        maxResponseBytes: 4 * 1024 * 1024,
        transcriptionModel: "whisper-1"
      })
    }))

  it.live("the configured openai-compatible adapter is the one that answers the route", () =>
    Effect.gen(function*() {
      const fake = yield* FakeOpenAi.scoped({ apiKey: "sk-config-test" })
      const env = { ...complete, LLM_BASE_URL: `${fake.url}/`, LLM_TRANSPORT: "sdk", LLM_TIMEOUT_MS: "5000" }
      const response = yield* ProviderAdapter.use((adapter) => adapter.chat(params([user("ping")]))).pipe(
        Effect.provide(providerFrom(env))
      )
      assert.strictEqual(response.content, "fake answer to: ping")
      assert.strictEqual((fake.chatRequests()[0]?.body as { model: string }).model, "gpt-test")
    }))

  it.effect("reads the optional variables", () =>
    Effect.gen(function*() {
      const resolved = yield* load({
        ...complete,
        LLM_BASE_URL: "http://localhost:11434/v1/",
        LLM_TIMEOUT_MS: "1500",
        LLM_TRANSPORT: "sdk",
        LLM_TRANSCRIPTION_MODEL: "gpt-4o-transcribe"
      })
      if (resolved.kind !== "openai-compatible") return assert.fail(resolved.kind)
      assert.strictEqual(resolved.settings.baseUrl, "http://localhost:11434/v1")
      assert.strictEqual(resolved.settings.timeoutMs, 1500)
      assert.strictEqual(resolved.settings.transport, "sdk")
      assert.strictEqual(resolved.settings.transcriptionModel, "gpt-4o-transcribe")
    }))

  it.effect("Adapter selected by config: anthropic, with its own default base URL and max_tokens", () =>
    Effect.gen(function*() {
      const resolved = yield* load(anthropic)
      assert.strictEqual(resolved.kind, "anthropic")
      if (resolved.kind !== "anthropic") return
      assert.deepStrictEqual({ ...resolved.settings, apiKey: Redacted.value(resolved.settings.apiKey) }, {
        model: "claude-test",
        baseUrl: "https://api.anthropic.com/v1",
        apiKey: "sk-ant-config-test",
        timeoutMs: 60_000,
        maxTokens: 4096,
        maxResponseBytes: 4 * 1024 * 1024
      })
    }))

  it.effect("anthropic reads LLM_BASE_URL, LLM_TIMEOUT_MS and LLM_MAX_TOKENS, and ignores the openai-only variables", () =>
    Effect.gen(function*() {
      const resolved = yield* load({
        ...anthropic,
        LLM_BASE_URL: "https://proxy.example.com/anthropic/v1/",
        LLM_TIMEOUT_MS: "1500",
        LLM_MAX_TOKENS: "8192",
        LLM_TRANSPORT: "not-a-transport",
        LLM_TRANSCRIPTION_MODEL: "whisper-1"
      })
      if (resolved.kind !== "anthropic") return assert.fail(resolved.kind)
      assert.strictEqual(resolved.settings.baseUrl, "https://proxy.example.com/anthropic/v1")
      assert.strictEqual(resolved.settings.timeoutMs, 1500)
      assert.strictEqual(resolved.settings.maxTokens, 8192)
    }))

  it.effect("LLM_MAX_TOKENS is anthropic's: the openai-compatible provider ignores it", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* load({ ...complete, LLM_MAX_TOKENS: "lots" })).kind, "openai-compatible")
    }))

  it.live("the configured anthropic adapter is the one that answers the route; it has no transcription", () =>
    Effect.gen(function*() {
      const fake = yield* FakeAnthropic.scoped({ apiKey: anthropic.LLM_API_KEY })
      const env = { ...anthropic, LLM_BASE_URL: fake.url, LLM_TIMEOUT_MS: "5000", LLM_MAX_TOKENS: "321" }
      const response = yield* ProviderAdapter.use((adapter) => adapter.chat(params([user("ping")], [], "SYS")))
        .pipe(Effect.provide(providerFrom(env)))
      assert.strictEqual(response.content, "fake answer to: ping")
      const [request] = fake.messageRequests()
      assert.strictEqual(request?.headers["x-api-key"], anthropic.LLM_API_KEY)
      assert.deepStrictEqual(request?.body, {
        model: "claude-test",
        max_tokens: 321,
        system: "SYS",
        messages: [{ role: "user", content: "ping" }]
      })

      const transcription = yield* Transcriber.use((t) =>
        t.transcribe({ data: new Uint8Array(1), fileName: "a.wav", mediaType: "audio/wav" })
      ).pipe(Effect.provide(providerFrom(env)), Effect.flip)
      assert.strictEqual(transcription.reason, "NotConfigured")
      assert.deepStrictEqual(transcription.missing, [])
      assert.strictEqual(transcription.message, "transcription is not supported by the anthropic provider")
    }))

  it.effect("selects the scripted provider, which answers from LLM_SCRIPT", () =>
    Effect.gen(function*() {
      const env = { LLM_PROVIDER: "scripted", LLM_MODEL: "demo", LLM_API_KEY: "unused", LLM_SCRIPT: demoScript }
      assert.deepStrictEqual(yield* load(env), { kind: "scripted", model: "demo", scriptPath: demoScript })
      const response = yield* ProviderAdapter.use((adapter) => adapter.chat(params([user("transcribe please")]))).pipe(
        Effect.provide(providerFrom(env))
      )
      assert.strictEqual(response.toolCalls?.[0]?.name, "transcribe_video")
    }))
})

describe("ProviderConfig: missing or invalid configuration", () => {
  it.effect("Missing required configuration", () =>
    Effect.gen(function*() {
      const env = { LLM_PROVIDER: "openai-compatible", LLM_MODEL: "gpt-test" }
      const error = yield* chatFailure(env)
      assert.strictEqual(error.reason, "NotConfigured")
      assert.deepStrictEqual(error.missing, ["LLM_API_KEY"])
      assert.strictEqual(error.message, "LLM provider not configured: missing LLM_API_KEY")
      const transcription = yield* Transcriber.use((t) =>
        t.transcribe({ data: new Uint8Array(1), fileName: "a.wav", mediaType: "audio/wav" })
      ).pipe(Effect.provide(providerFrom(env)), Effect.flip)
      assert.deepStrictEqual(transcription.missing, ["LLM_API_KEY"])
    }))

  it.effect("the layer builds with nothing set, and names every missing variable in order", () =>
    Effect.gen(function*() {
      const error = yield* chatFailure({})
      assert.strictEqual(error.reason, "NotConfigured")
      assert.deepStrictEqual(error.missing, ["LLM_PROVIDER", "LLM_MODEL", "LLM_API_KEY"])
      assert.strictEqual(error.message, "LLM provider not configured: missing LLM_PROVIDER, LLM_MODEL, LLM_API_KEY")
    }))

  it.effect("a blank value counts as missing", () =>
    Effect.gen(function*() {
      const error = notConfiguredError(yield* load({ ...complete, LLM_API_KEY: "  ", LLM_MODEL: "" }))
      assert.deepStrictEqual(error.missing, ["LLM_MODEL", "LLM_API_KEY"])
    }))

  it.effect("the key is required for the scripted provider too, and LLM_SCRIPT with it", () =>
    Effect.gen(function*() {
      const noKey = notConfiguredError(yield* load({ LLM_PROVIDER: "scripted", LLM_MODEL: "demo", LLM_SCRIPT: demoScript }))
      assert.deepStrictEqual(noKey.missing, ["LLM_API_KEY"])
      const noScript = notConfiguredError(yield* load({ LLM_PROVIDER: "scripted", LLM_MODEL: "demo", LLM_API_KEY: "x" }))
      assert.deepStrictEqual(noScript.missing, ["LLM_SCRIPT"])
      assert.strictEqual(noScript.message, "LLM provider not configured: missing LLM_SCRIPT")
    }))

  it.effect("anthropic needs the same variables: LLM_PROVIDER, LLM_MODEL, LLM_API_KEY", () =>
    Effect.gen(function*() {
      const error = yield* chatFailure({ LLM_PROVIDER: "anthropic" })
      assert.strictEqual(error.reason, "NotConfigured")
      assert.deepStrictEqual(error.missing, ["LLM_MODEL", "LLM_API_KEY"])
      assert.strictEqual(error.message, "LLM provider not configured: missing LLM_MODEL, LLM_API_KEY")
    }))

  it("invalid anthropic values are NotConfigured, naming the variable, never echoing the key", () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ LLM_MAX_TOKENS: "0" }, "LLM_MAX_TOKENS"],
      [{ LLM_MAX_TOKENS: "4k" }, "LLM_MAX_TOKENS"],
      [{ LLM_MAX_TOKENS: "-5" }, "LLM_MAX_TOKENS"],
      [{ LLM_MAX_TOKENS: "1.5" }, "LLM_MAX_TOKENS"],
      [{ LLM_MAX_RESPONSE_BYTES: "4MiB" }, "LLM_MAX_RESPONSE_BYTES"],
      [{ LLM_TIMEOUT_MS: "soon" }, "LLM_TIMEOUT_MS"],
      [{ LLM_BASE_URL: "api.anthropic.com" }, "LLM_BASE_URL"]
    ]
    for (const [overrides, name] of cases) {
      const error = notConfiguredError(
        resolveProvider({ ...anthropic, LLM_API_KEY: Redacted.make(anthropic.LLM_API_KEY), ...overrides })
      )
      assert.deepStrictEqual(error.missing, [name], JSON.stringify(overrides))
      assert.match(error.message, new RegExp(`^LLM provider not configured: invalid ${name} `))
      assert.notInclude(error.message, anthropic.LLM_API_KEY)
    }
    const baseUrl = notConfiguredError(resolveProvider({ ...anthropic, LLM_API_KEY: Redacted.make("k"), LLM_BASE_URL: "nope" }))
    assert.include(baseUrl.message, "https://api.anthropic.com/v1")
  })

  it("invalid values are NotConfigured, naming the variable, never echoing the key", () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ LLM_PROVIDER: "gemini" }, "LLM_PROVIDER"],
      [{ LLM_MAX_RESPONSE_BYTES: "12" }, "LLM_MAX_RESPONSE_BYTES"],
      [{ LLM_MAX_RESPONSE_BYTES: "-1" }, "LLM_MAX_RESPONSE_BYTES"],
      [{ LLM_BASE_URL: "ftp://example.com" }, "LLM_BASE_URL"],
      [{ LLM_BASE_URL: "not a url" }, "LLM_BASE_URL"],
      [{ LLM_TIMEOUT_MS: "0" }, "LLM_TIMEOUT_MS"],
      [{ LLM_TIMEOUT_MS: "10s" }, "LLM_TIMEOUT_MS"],
      [{ LLM_TRANSPORT: "fetch" }, "LLM_TRANSPORT"]
    ]
    for (const [overrides, name] of cases) {
      const resolved = resolveProvider({ ...complete, LLM_API_KEY: Redacted.make(complete.LLM_API_KEY), ...overrides })
      const error = notConfiguredError(resolved)
      assert.deepStrictEqual(error.missing, [name], JSON.stringify(overrides))
      assert.match(error.message, new RegExp(`^LLM provider not configured: invalid ${name} `))
      assert.notInclude(error.message, complete.LLM_API_KEY)
    }
  })

  it("missing variables are reported before invalid ones", () => {
    const error = notConfiguredError(resolveProvider({ LLM_PROVIDER: "gemini", LLM_MODEL: "m" }))
    assert.deepStrictEqual(error.missing, ["LLM_API_KEY"])
  })
})
