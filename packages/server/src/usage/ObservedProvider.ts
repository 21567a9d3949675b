/**
 * The chat route's provider observed (`telemetry/GenAi.ts`: a `chat {model}`
 * span per call, the call metrics) and every answered call's tokens counted in
 * the usage ledger.
 */
import { Context, Effect, Layer } from "effect"
import { ProviderAdapter, readProviderEnv, Transcriber } from "@switchboard/providers"
import { observeAdapter } from "../telemetry/GenAi.ts"
import { UsageLedger } from "./UsageLedger.ts"

/**
 * The chat route's provider (the one the turns, wakes and sub-agents call), observed and counted in
 * the usage ledger; named from `LLM_PROVIDER`, `LLM_MODEL`.
 */
export const observedProvider = <E, R>(
  provider: Layer.Layer<ProviderAdapter | Transcriber, E, R>
): Layer.Layer<ProviderAdapter | Transcriber, E, R | UsageLedger> =>
  Layer.effectContext(Effect.gen(function*() {
    const adapter = yield* ProviderAdapter
    const transcriber = yield* Transcriber
    const ledger = yield* UsageLedger
    const env = yield* readProviderEnv
    const target = { provider: env.LLM_PROVIDER ?? "unknown", model: env.LLM_MODEL ?? "unknown" }
    return Context.make(ProviderAdapter, observeAdapter(adapter, target, ledger.count)).pipe(Context.add(Transcriber, transcriber))
  })).pipe(Layer.provide(provider))
