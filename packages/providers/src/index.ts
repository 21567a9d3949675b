/**
 * The provider port and what implements it: the adapters (openai-compatible,
 * anthropic, scripted) chosen by configuration, their pure wire conversions,
 * the pooled transports, redaction, and the planner's pure decision mapping.
 * Shared by the server and a host agent's direct transport.
 */
export * from "./ProviderAdapter.ts"
export * from "./ProviderConfig.ts"
export * from "./ProviderPools.ts"
export * from "./ProviderWireError.ts"
export * from "./planner/PlannerProvider.ts"
export * from "./planner/ResolveDecision.ts"
export { NOT_CONFIGURED_PREFIX } from "./NotConfigured.ts"
export { DEFAULT_MAX_RESPONSE_BYTES, MAX_MAX_RESPONSE_BYTES, MIN_MAX_RESPONSE_BYTES } from "./ResponseLimit.ts"
export { transportKinds } from "./openai/ChatCompletionsTransport.ts"
export { toolInputSchema } from "./WireParts.ts"
export * as OpenAiCompatible from "./openai/OpenAiCompatible.ts"
export * as Scripted from "./scripted/Scripted.ts"
