/**
 * The background runner: claims jobs from the database and runs each one's
 * sub-agent, at most `JOB_CONCURRENCY` at a time in this server.
 *
 * A claim is a lease (`FOR UPDATE SKIP LOCKED`, so replicas never take the
 * same job), renewed while the sub-agent works; a runner that loses its lease
 * (it stalled, another replica took over, the operator deleted its chat and
 * the job with it) stops and drops its result. A
 * replica killed mid-job simply stops renewing: the sweep of another replica
 * claims the job once the lease expired and runs it again. A job whose runs
 * keep dying (`maxRuns`) ends in the failure shape, like one past
 * `JOB_TIMEOUT_MS` — and either is steered like any result. A replica that
 * stops gracefully (SIGTERM) stops claiming, then gives its jobs back with a
 * notification, uncounted: another replica runs them at once (ClaimLoop.ts).
 *
 * On completion the result is stored, the wake queued and every replica
 * notified in one statement (`finishRun`): the wake pipeline takes it from
 * there. A defined kind's job whose call needs the user's approval parks
 * instead (`JobParking.ts`): its state saved, its lease given back, the run
 * ended without a result; the decision makes it claimable again, and the run
 * that claims it resumes the sub-agent where it stopped.
 */
import type { JobInput, SubagentResult } from "@switchboard/domain"
import { isSubagentFailure, maxStoredValueBytes, subagentFailure, waitingActivity } from "@switchboard/domain"
import { Cause, Clock, Deferred, Duration, Effect, Layer, Option, Ref, Schema } from "effect"
import { hostname } from "node:os"
import { randomUUID } from "node:crypto"
import { forkClaimLoop } from "./ClaimLoop.ts"
import { finalActivity, startActivity } from "./JobActivity.ts"
import { kindOf } from "./JobKinds.ts"
import { Subagents } from "./Subagents.ts"
import type { JobApprovals } from "./Subagents.ts"
import { decodeCheckpoint, JobParking } from "./JobParking.ts"
import { TurnStreams } from "../chat/stream/TurnStreams.ts"
import { JobSignals } from "./JobSignals.ts"
import { storedBytes } from "../db/StoredSize.ts"
import { storableResult } from "./StorableResult.ts"
import type { ClaimedJob } from "./JobsRepo.ts"
import { JobsRepo } from "./JobsRepo.ts"
import { JobsConfig } from "./JobsConfig.ts"
import { invokeAgent } from "../telemetry/GenAi.ts"
import { userOf } from "../users/ChatKey.ts"

/** This process's name in leases: readable in the table, unique per start. */
export const makeOwner = (role: string) => `${role}:${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`

/** What the failure shape's text says for a result that is not a sub-agent's own. */
const failureReason = (result: SubagentResult, kind: ClaimedJob["kind"]): string | undefined => {
  if (!isSubagentFailure(kind, result)) return undefined
  const r = result as { brief?: string; notes?: string; error?: string }
  return r.notes ?? r.brief ?? r.error ?? "failed"
}

/**
 * Keeps `owner`'s lease on `id` alive while `work` runs; `None` when the
 * lease was lost (the work is interrupted then).
 */
export const withLease = <A, E, R>(
  repo: JobsRepo["Service"],
  id: string,
  owner: string,
  leaseMs: number,
  work: Effect.Effect<A, E, R>
): Effect.Effect<Option.Option<A>, E, R> =>
  Effect.gen(function*() {
    const lost = yield* Deferred.make<void>()
    const keeper = Effect.sleep(Math.max(50, Math.floor(leaseMs / 3))).pipe(
      Effect.andThen(repo.renew(id, owner, leaseMs)),
      Effect.flatMap((held) => held ? Effect.void : Deferred.succeed(lost, undefined).pipe(Effect.andThen(Effect.never))),
      Effect.forever
    )
    return yield* Effect.raceFirst(
      work.pipe(Effect.map(Option.some)),
      Effect.raceFirst(Deferred.await(lost), keeper).pipe(Effect.as(Option.none<A>()))
    )
  })

export const layer = Layer.effectDiscard(Effect.gen(function*() {
  const repo = yield* JobsRepo
  const signals = yield* JobSignals
  const subagents = yield* Subagents
  const config = yield* JobsConfig
  const parking = yield* JobParking
  // Absent where the jobs run without chat's streams (tests of the pipeline alone).
  const streams = Option.getOrUndefined(yield* Effect.serviceOption(TurnStreams))
  const owner = makeOwner("runner")

  const decode = (job: ClaimedJob) => Schema.decodeUnknownOption(kindOf(job.kind).input)(job.input) as Option.Option<JobInput>

  /**
   * Approvals inside a defined kind's job (JobParking.ts): `run.parked` says the run ended parked. The time limit
   * counts only the sub-agent's working time, the runs before it parked included.
   */
  const approvalsOf = (job: ClaimedJob, run: { parked: boolean }, startedAt: number): JobApprovals | undefined => {
    if (job.definition === undefined) return undefined
    const checkpoint = job.checkpoint === undefined ? undefined : decodeCheckpoint(job.checkpoint)
    const timedOut = `no decision within APPROVAL_TIMEOUT (${Duration.format(Duration.millis(config.approvalTimeoutMs))})`
    return {
      checkpoint,
      decision: checkpoint === undefined ? Effect.succeed({ approved: false, reason: timedOut }) : parking.decision(job.id, job.chatId, checkpoint, timedOut),
      start: parking.start(job.id, owner),
      park: (state, waitingFor) =>
        Effect.gen(function*() {
          const workedMs = (checkpoint?.workedMs ?? 0) + (yield* Clock.currentTimeMillis) - startedAt
          // A job row too large to read back would fail every claim of it: a conversation that outgrew
          // what a stored value may be cannot wait; the run fails saying so.
          const bytes = storedBytes({ ...state, workedMs })
          if (bytes > maxStoredValueBytes) {
            return `its conversation is ${bytes} bytes of JSON, over the ${maxStoredValueBytes} a job keeps while it waits for an approval of ${waitingFor.toolName}`
          }
          const activity = waitingActivity(waitingFor.toolName)
          run.parked = yield* parking.park(job.id, owner, { ...state, workedMs }, waitingFor, activity, config.approvalTimeoutMs)
          // A turn of the chat being streamed (followed) shows the call and asks; the job record says it anyway.
          // The call's id is the job's own: a sub-agent's call ids are its provider's, which the chat's may repeat.
          const toolCallId = `${job.id}_${state.callId}`
          if (run.parked && streams !== undefined) {
            yield* streams.announce(job.chatId, [
              { type: "tool-input-available", toolCallId, toolName: waitingFor.toolName, input: waitingFor.input },
              { type: "tool-approval-request", approvalId: waitingFor.approvalId, toolCallId }
            ])
          }
          return undefined
        })
    }
  }

  const runSubagent = (job: ClaimedJob, input: JobInput, run: { parked: boolean }): Effect.Effect<SubagentResult> =>
    Effect.gen(function*() {
      if (job.runAttempts > config.maxRuns) {
        return subagentFailure(job.kind, input, `the job's runner stopped ${config.maxRuns} times before it finished`)
      }
      const approvals = approvalsOf(job, run, yield* Clock.currentTimeMillis)
      // A defined kind may set its own time limit; the time it worked before it parked counts against it.
      const timeoutMs = Math.max(1, (job.definition?.timeoutMs ?? config.timeoutMs) - (approvals?.checkpoint?.workedMs ?? 0))
      return yield* subagents.run({
        jobId: job.id,
        kind: job.kind,
        input,
        chatId: job.chatId,
        ...(job.definition === undefined ? {} : { definition: job.definition }),
        ...(approvals === undefined ? {} : { approvals }),
        reportActivity: (line) => repo.reportActivity(job.id, owner, line.slice(0, 500))
      }).pipe(
        invokeAgent({ kind: "job", agent: job.kind, userId: userOf(job.chatId), chatId: job.chatId, jobId: job.id }),
        Effect.timeoutOption(timeoutMs),
        Effect.map(Option.getOrElse(() => subagentFailure(job.kind, input, `timed out after ${timeoutMs} ms`))),
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause)
            ? Effect.failCause(cause)
            : Effect.logError(`job ${job.id}: the sub-agent crashed`, cause).pipe(
              Effect.as(subagentFailure(job.kind, input, "the sub-agent crashed"))
            )
        )
      )
    })

  const runJob = (job: ClaimedJob) =>
    Effect.gen(function*() {
      // A run again (its runner died or gave it back): the last run's tool line no longer says what it does.
      const start = startActivity(job.kind, job.input)
      if (job.activity !== start) yield* repo.reportActivity(job.id, owner, start)
      const input = decode(job)
      const run = { parked: false }
      const outcome = Option.isNone(input)
        ? Option.some(subagentFailure(job.kind, job.input as JobInput, "the job's input is not valid"))
        : yield* withLease(repo, job.id, owner, config.leaseMs, runSubagent(job, input.value, run))
      // Parked: its state is saved and its lease given back; the decision makes it claimable again.
      if (run.parked) return
      if (Option.isNone(outcome)) {
        return yield* Effect.logWarning(`job ${job.id}: lease lost (another runner has it, or its chat was deleted)`)
      }
      const stored = storableResult(job, outcome.value)
      if (stored.oversizedBytes !== undefined) {
        yield* Effect.logError(`job ${job.id}: result too large to store (a steer of ${stored.oversizedBytes} bytes of JSON)`)
      }
      const result = stored.result
      // This process's wake loop takes the wake at once when it has room and the chat is free
      // (uninterruptibly: a wake claimed here is in the loop, whose fiber gives it back on shutdown).
      // A hand-off is a claim: not once this process is shutting down (the gate is closed), when
      // the statement only notifies and another replica's wake takes it.
      const handoff = yield* Ref.get(signals.handoff)
      const finished = yield* signals.claims.hold((open) => Effect.gen(function*() {
        const reserved = open && handoff !== undefined && (yield* handoff.reserve)
        const finished = yield* repo.finishRun(
          job.id,
          owner,
          result,
          failureReason(result, job.kind),
          finalActivity(job.kind, result),
          reserved ? { owner: handoff.owner, leaseMs: handoff.leaseMs } : undefined
        ).pipe(Effect.onError(() => reserved ? handoff.unreserve : Effect.void))
        if (reserved && finished.wake !== undefined) yield* handoff.deliver(finished.wake)
        else if (reserved) yield* handoff.unreserve
        return finished
      }))
      if (finished.wake !== undefined) return
      // The statement notified every replica; this process's wake loop hears it at once.
      if (finished.finished) yield* signals.wake.local
    }).pipe(
      // Shutting down: give the job back now rather than when the lease expires.
      Effect.onInterrupt(() => repo.release(job.id, owner)),
      Effect.annotateLogs({ jobId: job.id, kind: job.kind })
    )

  yield* forkClaimLoop({
    name: "runner",
    concurrency: config.concurrency,
    sweepMs: config.sweepMs,
    signal: signals.run,
    gate: signals.claims,
    claim: (free) => repo.claimRun(owner, free, config.leaseMs),
    handle: runJob
  })
})).pipe(Layer.provide(JobParking.layer))
