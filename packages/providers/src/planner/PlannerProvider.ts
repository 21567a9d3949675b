/**
 * The planner's provider call, from a provider profile instead of the
 * environment: the chat route's own adapters (the pure wire conversions, the
 * pooled undici transport, the deadline, the redacted errors), built per
 * request from the profile's provider, model, base URL, timeout and key, over
 * the shared pool of that base URL's origin (`ProviderPools`).
 *
 * A request is one user message (the host's user prompt, with the screenshot
 * as an image input: an `image_url` data URL on Chat Completions, an image
 * block on Messages), the tools given as JSON Schema, and exactly one tool
 * call asked for.
 */
import type { DecisionRequest, ProviderChatParams, ProviderChatResponse, ProviderKind } from "@switchboard/domain"
import { Effect } from "effect"
import type { Redacted } from "effect"
import * as Anthropic from "../anthropic/Anthropic.ts"
import * as OpenAiCompatible from "../openai/OpenAiCompatible.ts"
import type { ProviderError } from "../ProviderAdapter.ts"
import { endpointUrl } from "../ProviderHttp.ts"
import type { ProviderPools } from "../ProviderPools.ts"
import * as UndiciTransport from "../openai/UndiciTransport.ts"

export interface PlannerProfile {
  readonly provider: ProviderKind
  readonly model: string
  readonly baseUrl: string
  readonly timeoutMs: number
  readonly apiKey: Redacted.Redacted<string>
}

export const defaultBaseUrl = (provider: ProviderKind): string =>
  provider === "anthropic" ? Anthropic.DEFAULT_BASE_URL : OpenAiCompatible.DEFAULT_BASE_URL

/** The provider-agnostic parameters of one decision request (the host's `timeoutMs` plays no part). */
export const decisionParams = (request: DecisionRequest): ProviderChatParams => ({
  systemPrompt: request.systemPrompt,
  messages: [{ id: "planner_step", role: "user", content: request.userPrompt, timestamp: 0 }],
  toolSchemas: request.tools.map((tool) => ({
    name: tool.name,
    description: tool.description ?? "",
    parameters: [],
    inputSchema: tool.parameters
  })),
  images: request.screenshot === undefined ? [] : [request.screenshot],
  toolChoice: "required"
})

/** One call to the profile's provider, within the profile's timeout. */
export const callProvider = (
  pools: ProviderPools["Service"],
  profile: PlannerProfile,
  params: ProviderChatParams
): Effect.Effect<ProviderChatResponse, ProviderError> =>
  Effect.flatMap(pools.forOrigin(endpointUrl(profile.baseUrl, "/").origin), (pool) => {
    switch (profile.provider) {
      case "anthropic":
        return Anthropic.chatOver(pool, { ...profile, maxTokens: Anthropic.DEFAULT_MAX_TOKENS })(params)
      case "openai-compatible":
        return OpenAiCompatible.chatVia(UndiciTransport.chatSender(pool, profile).send, profile, "undici")(params)
    }
  })
