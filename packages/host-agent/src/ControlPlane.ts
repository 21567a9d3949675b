/**
 * `ControlPlane`: the host routes of the cloud as the host agent sees them —
 * heartbeat, claim, lease renewal, result (docs/planner.md,
 * host routes). A port, so the agent's claim/lease/shutdown logic
 * is tested over a fake, and the real layer (`layer`) goes through the typed
 * HttpApi client with the host token.
 *
 * Every failure is one `ControlPlaneError` with the server's `code` when it
 * answered. On a task route (lease, result, decision), `lease_lost`,
 * `forbidden` and `task_cancelled` all mean "this attempt is no longer ours"
 * (its lease expired; the task was claimed again, possibly by another host;
 * the operator cancelled it): stop working on it, report nothing.
 * On heartbeat and claim, `unauthenticated` / `forbidden` mean the host's
 * token or id is wrong: fatal for the agent.
 */
import type { ClaimedTask, ResultStatus } from "@switchboard/domain"
import { Context, Data, Effect, Layer } from "effect"
import { ApiClient, describeApiFailure } from "@switchboard/client"

export class ControlPlaneError extends Data.TaggedError("ControlPlaneError")<{
  readonly message: string
  readonly status?: number
  readonly code?: string
}> {}

export type { ClaimedTask }

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
}>()("switchboard/host-agent/ControlPlane") {
  /** Over the typed HttpApi client, whose requests carry the host token (see `ApiClient`). */
  static readonly layerNoDeps = (hostId: string): Layer.Layer<ControlPlane, never, ApiClient> =>
    Layer.effect(
      ControlPlane,
      Effect.gen(function*() {
        const client = yield* ApiClient
        const params = { hostId }
        return ControlPlane.of({
          heartbeat: client.hosts.heartbeat({ params }).pipe(
            Effect.map((answer) => answer.serverTime),
            toControlPlaneError,
            Effect.withSpan("ControlPlane.heartbeat")
          ),
          claim: client.hosts.claim({ params }).pipe(
            // 204: nothing queued.
            Effect.map((answer) => answer === undefined || answer === null ? undefined : answer.task),
            toControlPlaneError,
            Effect.withSpan("ControlPlane.claim")
          ),
          renewLease: (task) =>
            client.hosts.lease({ params: { taskId: task.taskId }, payload: { hostId, attempt: task.attempt } }).pipe(
              Effect.map((answer) => answer.leaseExpiresAt),
              toControlPlaneError,
              Effect.withSpan("ControlPlane.renewLease")
            ),
          reportResult: (task, result) =>
            client.hosts.result({
              params: { taskId: task.taskId },
              payload: { hostId, attempt: task.attempt, status: result.status, output: result.output }
            }).pipe(Effect.asVoid, toControlPlaneError, Effect.withSpan("ControlPlane.reportResult"))
        })
      })
    )

  static readonly layerTest = (impl: typeof ControlPlane.Service): Layer.Layer<ControlPlane> =>
    Layer.succeed(ControlPlane, ControlPlane.of(impl))
}

const toControlPlaneError = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, ControlPlaneError, R> =>
  effect.pipe(
    Effect.catch((error) =>
      describeApiFailure(error).pipe(Effect.flatMap((failure) => Effect.fail(new ControlPlaneError(failure))))
    )
  )

/** The codes by which a task route says the attempt is not this host's any more. */
export const taskLostCodes: ReadonlySet<string> = new Set(["lease_lost", "forbidden", "task_cancelled"])

/** The operator cancelled the task (a task route's 409 `task_cancelled`). */
export const isTaskCancelled = (error: { readonly code?: string | undefined }): boolean => error.code === "task_cancelled"

export const isTaskLost = (error: { readonly code?: string | undefined }): boolean =>
  error.code !== undefined && taskLostCodes.has(error.code)

/** On heartbeat or claim: the host's credentials are refused, retrying cannot help. */
export const isFatal = (error: ControlPlaneError): boolean =>
  error.code === "unauthenticated" || error.code === "forbidden" || error.status === 401 || error.status === 403
