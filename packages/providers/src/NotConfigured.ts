/**
 * The provider the server runs with when the LLM configuration is missing or
 * invalid: the server must still start (health checks, the planner, the jobs
 * routes do not need it), and every chat or transcription call fails with the
 * same `NotConfigured` error, which the routes turn into a 502 naming what is
 * missing.
 */
import { Effect, Layer } from "effect"
import { ProviderAdapter, ProviderError, Transcriber } from "./ProviderAdapter.ts"

export const NOT_CONFIGURED_PREFIX = "LLM provider not configured: "

/** `NotConfigured`, with the contract's message shape: `LLM provider not configured: <detail>`. */
export const notConfigured = (missing: ReadonlyArray<string>, detail: string): ProviderError =>
  new ProviderError({ reason: "NotConfigured", missing, message: `${NOT_CONFIGURED_PREFIX}${detail}` })

/** `LLM provider not configured: missing A, B`. */
export const missingVariables = (missing: ReadonlyArray<string>): ProviderError =>
  notConfigured(missing, `missing ${missing.join(", ")}`)

/** Both services, failing every call with `error`. */
export const layer = (error: ProviderError): Layer.Layer<ProviderAdapter | Transcriber> =>
  Layer.mergeAll(
    Layer.succeed(ProviderAdapter, ProviderAdapter.of({ chat: () => Effect.fail(error), streamTo: () => Effect.fail(error) })),
    Layer.succeed(Transcriber, Transcriber.of({ transcribe: () => Effect.fail(error) }))
  )
