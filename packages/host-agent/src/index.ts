/**
 * The host agent (docs/planner.md, the host agent): a loop that claims tasks
 * from the control plane, asks a planner for one tool-call decision per step
 * — the cloud's (`CloudProxyPlanner`) or, with the host's own provider
 * settings, the provider directly (`loadDirectPlanner`) — runs the decided
 * tool in its work directory and reports each task's result. The CLI's
 * `switchboard host run` is its terminal face.
 */
export { ControlPlane, ControlPlaneError } from "./ControlPlane.ts"
export * as CloudProxyPlanner from "./CloudProxyPlanner.ts"
export { HostAgentFatal, runHostAgent } from "./HostAgent.ts"
export type { HostAgentOptions, TaskEnd } from "./HostAgent.ts"
export { makeHostRegistry } from "./HostRegistry.ts"
export type { HostToolOptions, HostTools } from "./HostRegistry.ts"
export { defaultMaxSteps, defaultPlannerRetries, defaultRetryDelay } from "./PlannerLoop.ts"
export { defaultShellOutputBytes, defaultShellTimeoutMs } from "./tools/Shell.ts"

/**
 * The planner that calls the provider directly, loaded on demand: the provider stack (undici, the
 * `openai` SDK) is not loaded for the cloud's planner, for `switchboard chat` or for `--help`.
 */
export const loadDirectPlanner = () => import("./DirectPlanner.ts")
