/**
 * `ControlPlane`: the host routes of the cloud as the host agent sees them —
 * heartbeat, claim, lease renewal, result (CONTRACT.md, "Planner proxy and
 * the host control plane"). A port, so the agent's claim/lease/shutdown logic
 * is tested over a fake, and the real layer (`layer`) goes through the typed
 * HttpApi client with the host token.
 *
 * Every failure is one `ControlPlaneError` with the server's `code` when it
 * answered: `lease_lost` means "stop working on that attempt", `unauthenticated`
 * / `forbidden` mean the host's token or id is wrong (fatal for the agent).
 */
import { Context, Data, Layer } from "effect"
import type { Effect } from "effect"

export class ControlPlaneError extends Data.TaggedError("ControlPlaneError")<{
  readonly message: string
  readonly status?: number
  readonly code?: string
}> {}

// TODO(merge s5-server): the domain's ClaimedTask / ResultStatus once committed.
export interface ClaimedTask {
  readonly taskId: string
  readonly attempt: number
  readonly goal: string
  readonly leaseExpiresAt: string
}
export type ResultStatus = "succeeded" | "failed"

export interface TaskAttempt {
  readonly taskId: string
  readonly attempt: number
}

export interface ReportedResult {
  readonly status: ResultStatus
  readonly output: string
}

export class ControlPlane extends Context.Service<ControlPlane, {
  /** The server's time (ISO-8601). */
  readonly heartbeat: Effect.Effect<string, ControlPlaneError>
  /** The next task for this host, or `undefined` when none is queued (204). */
  readonly claim: Effect.Effect<ClaimedTask | undefined, ControlPlaneError>
  /** The new `leaseExpiresAt` (ISO-8601). */
  renewLease(task: TaskAttempt): Effect.Effect<string, ControlPlaneError>
  reportResult(task: TaskAttempt, result: ReportedResult): Effect.Effect<void, ControlPlaneError>
}>()("switchboard/cli/hosts/ControlPlane") {
  static readonly layerTest = (impl: typeof ControlPlane.Service): Layer.Layer<ControlPlane> =>
    Layer.succeed(ControlPlane, ControlPlane.of(impl))
}

/** The host's credentials are refused: retrying cannot help. */
export const isFatal = (error: ControlPlaneError): boolean =>
  error.code === "unauthenticated" || error.code === "forbidden" || error.status === 401 || error.status === 403
