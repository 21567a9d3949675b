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
