/**
 * The `direct` planner: the host calls a provider itself, with its own key,
 * through the server's provider adapters (the same `OpenAiWire` /
 * `AnthropicWire` conversions and pooled transport as the cloud), and
 * resolves the answer with the cloud's own pure `resolveDecision`, so both
 * transports accept and refuse exactly the same answers. Nothing of it
 * reaches the cloud's decision log: the cloud is only asked for tasks, leases
 * and results.
 *
 * Its settings are the environment variables the server's chat route reads
 * (`ProviderConfig.ts`): `LLM_PROVIDER` (`openai-compatible` | `anthropic`;
 * `scripted` also works, for demos), `LLM_MODEL`, `LLM_API_KEY`, and
 * optionally `LLM_BASE_URL`, `LLM_TIMEOUT_MS`, `LLM_MAX_TOKENS`. Missing ones
 * stop `host run` before it claims anything.
 */
import type { ChatMessage, ToolSchema } from "@switchboard/domain"
import { Clock, Effect, Layer } from "effect"
import { layerFor, loadProvider, ProviderAdapter, resolveDecision } from "@switchboard/providers"
import type { ProviderError } from "@switchboard/providers"
import { Planner, PlannerError } from "./Planner.ts"
import type { DecisionRequest } from "./Planner.ts"

const fromProviderError = (error: ProviderError) =>
  new PlannerError({
    message: error.message,
    code: error.reason === "Timeout" ? "provider_timeout" : error.reason === "NotConfigured" ? "provider_not_configured" : "provider_error",
    ...(error.status === undefined ? {} : { status: error.status }),
    retryable: error.reason !== "NotConfigured"
  })

export const layerNoDeps: Layer.Layer<Planner, never, ProviderAdapter> = Layer.effect(
  Planner,
  Effect.gen(function*() {
    const adapter = yield* ProviderAdapter
    return Planner.of({
      decide: Effect.fn("DirectPlanner.decide")(function*(request: DecisionRequest) {
        const timestamp = yield* Clock.currentTimeMillis
        const message: ChatMessage = { id: `planner_${request.taskId}`, role: "user", content: request.userPrompt, timestamp }
        const toolSchemas: Array<ToolSchema> = request.tools.map((tool) => ({
          name: tool.name,
          description: tool.description,
          parameters: [],
          inputSchema: tool.parameters
        }))
        const response = yield* adapter.chat({
          messages: [message],
          systemPrompt: request.systemPrompt,
          toolSchemas,
          toolChoice: "required",
          ...(request.screenshot === undefined ? {} : { images: [request.screenshot] })
        }).pipe(Effect.mapError(fromProviderError))
        const resolved = resolveDecision(response, request.tools)
        if (resolved._tag === "Failure") {
          return yield* new PlannerError({ message: resolved.failure.error, code: resolved.failure.code, retryable: true })
        }
        return resolved.success
      })
    })
  })
)

/**
 * The planner over the provider the environment names, or the sentence
 * saying which variables are missing or invalid.
 */
export const fromEnvironment: Effect.Effect<Layer.Layer<Planner>, string> = Effect.gen(function*() {
  const resolved = yield* loadProvider
  if (resolved.kind === "not-configured") return yield* Effect.fail(resolved.error.message)
  return layerNoDeps.pipe(Layer.provide(layerFor(resolved)))
})
