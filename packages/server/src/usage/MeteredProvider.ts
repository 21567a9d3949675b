/**
 * The chat route's provider, counted: every call that answers — whole or
 * streamed, for a turn, a wake or a sub-agent's step — is recorded in the
 * usage ledger under the scope of the turn it serves (`invokeAgent`'s, which
 * names its spans too; a chat turn's when there is none) and the model it ran
 * (the call's own, a sub-agent's, else `LLM_MODEL`). A call that failed or
 * was stopped is not counted: the provider reported no usage for it.
 */
import { Config, Effect, Layer } from "effect"
import type { ProviderChatParams, ProviderChatResponse } from "@switchboard/domain"
import { ProviderAdapter } from "@switchboard/providers/ProviderAdapter"
import type { ProviderError } from "@switchboard/providers/ProviderAdapter"
import { currentScope } from "../telemetry/GenAi.ts"
import { UsageLedger } from "./UsageLedger.ts"

/** `provider` with its `ProviderAdapter` counted; its other services (the transcriber) as they are. */
export const metered = <ROut, E, R>(
  provider: Layer.Layer<ROut | ProviderAdapter, E, R>
): Layer.Layer<ROut | ProviderAdapter, E | Config.ConfigError, R | UsageLedger> =>
  Layer.effect(ProviderAdapter, Effect.gen(function*() {
    const inner = yield* ProviderAdapter
    const ledger = yield* UsageLedger
    const configured = yield* Config.String("LLM_MODEL").pipe(Config.withDefault(""))
    const counted = (params: ProviderChatParams, call: Effect.Effect<ProviderChatResponse, ProviderError>) =>
      Effect.tap(call, (response) =>
        Effect.gen(function*() {
          const scope = yield* currentScope
          yield* ledger.record(scope ?? { kind: "chat" }, params.model ?? configured, response.usage)
        }))
    return ProviderAdapter.of({
      chat: (params) => counted(params, inner.chat(params)),
      streamTo: (params, sink) => counted(params, inner.streamTo(params, sink))
    })
  })).pipe(Layer.provideMerge(provider))
