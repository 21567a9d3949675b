/**
 * The wake pipeline (docs/jobs.md, "A job's life": steer and wake): delivers each finished job's steer by a
 * server-side turn through the same `TurnComposer` as a client request —
 * write-ahead persist, the chat's in-flight marker, the same provider call.
 *
 * The queue is the `jobs` table: a job in phase `wake` is queued in its chat,
 * in completion order, and only the head of each chat's queue can be claimed
 * (under a lease), so two steers of one chat never fire at once while chats
 * never wait for each other. A claimed wake:
 * - finds a turn in flight (the composer answers `TurnInFlight`, a 409: a
 *   client turn raced in) → back in the queue until that turn ends (its end
 *   makes the chat's wakes due and notifies every replica);
 * - finds a client-side tool call of the transcript unanswered → back in the
 *   queue until the client's continuation (a turn) ends;
 * - finds its steer already delivered *and answered* (a crashed wake, or a
 *   client turn that came first) → only settles the job;
 * - otherwise stores the steer (`steer_<jobId>`, unique in the chat: never
 *   twice), lets the model answer it (job tools included: a wake may dispatch
 *   more jobs; client calls are left for the client) and settles the job —
 *   `done`/`error` — in the transaction that stores the answer.
 *
 * A wake turn is the chat's agent's (docs/agents.md), as the claim read it from
 * the chat's row: its prompt, its tools, its model. An agent deleted since is a
 * failed wake (retried, as a provider outage is) until the operator defines it
 * again: a steer is never dropped for it.
 *
 * A chat deleted by the operator takes its jobs with it: a wake under way
 * finds its chat gone (the composer's `ChatNotFound` or `ChatGone`), stores
 * nothing and ends there.
 *
 * A wake that dies (SIGKILL) leaves its lease to expire and, at worst, the
 * chat's marker until its expiry; the sweep then re-enters it, and the stored
 * steer (deduplicated by id) makes the re-entry the same turn's continuation.
 */
import type { ChatMessage } from "@switchboard/domain"
import {
  buildSubagentSteer,
  inSchemaOrder,
  ChatNotFound,
  isSubagentFailure,
  steerMessageId,
  subagentFailure,
  TurnInFlight,
  unansweredToolCalls
} from "@switchboard/domain"
import type { JobInput, JsonObject } from "@switchboard/domain"
import { Cause, Clock, Effect, Layer, Option, Ref } from "effect"
import type { TurnGuard } from "../chat/turn/TurnComposer.ts"
import { TurnStreams } from "../chat/stream/TurnStreams.ts"
import { TurnComposer } from "../chat/turn/TurnComposer.ts"
import { ChatRepo } from "../chat/ChatRepo.ts"
import { Agents } from "../agents/Agents.ts"
import { forkClaimLoop } from "./ClaimLoop.ts"
import { makeOwner, withLease } from "./JobRunner.ts"
import { JobSignals } from "./JobSignals.ts"
import type { ClaimedWake } from "./JobsRepo.ts"
import { JobsRepo } from "./JobsRepo.ts"
import { JobsConfig } from "./JobsConfig.ts"
import { storableResult } from "./StorableResult.ts"
import { invokeAgent } from "../telemetry/GenAi.ts"
import { userOf } from "../users/ChatKey.ts"
import { recordSteerLag } from "../telemetry/Metrics.ts"

/** Wakes fired at once by this server (each in its own chat). */
export const wakeConcurrency = 8

/** Retry delay of a wake whose chat had a turn in flight, while that turn lasts (its end makes it due at once). */
const busyRetryMs = 1_000

/** A wake's guard: what the stored transcript says about delivering `steerId` now. */
export const wakeGuard = (steerId: string) => (transcript: ReadonlyArray<ChatMessage>): TurnGuard => {
  const at = transcript.findIndex((m) => m.id === steerId)
  if (at >= 0) return transcript.slice(at + 1).some((m) => m.role === "assistant") ? "skip" : "proceed"
  return unansweredToolCalls(transcript).length > 0 ? "defer" : "proceed"
}

export const layer = Layer.effectDiscard(Effect.gen(function*() {
  const repo = yield* JobsRepo
  const signals = yield* JobSignals
  const composer = yield* TurnComposer
  const streams = yield* TurnStreams
  const chats = yield* ChatRepo
  const agents = yield* Agents
  const config = yield* JobsConfig
  const owner = makeOwner("wake")

  const deliver = (job: ClaimedWake) =>
    Effect.gen(function*() {
      const stored = storableResult(job, job.result ?? subagentFailure(job.kind, job.input as JobInput, "the result was lost"))
      if (stored.oversizedBytes !== undefined) {
        yield* Effect.logError(`job ${job.id}: result too large to store (a steer of ${stored.oversizedBytes} bytes of JSON)`)
      }
      // A defined kind's result in its schema's order (the database keeps no key order): the steer's text reads so.
      const result = job.definition === undefined ? stored.result : inSchemaOrder(job.definition.result, stored.result) as JsonObject
      const status = isSubagentFailure(job.kind, result) ? "error" as const : "done" as const
      const steer = buildSubagentSteer(job, result, yield* Clock.currentTimeMillis)
      const guard = wakeGuard(steerMessageId(job.id))
      // Look (at the transcript the claim read) before taking the marker, so that a waiting steer
      // does not make a client's turn a 409; the composer checks under the marker that nothing was
      // stored since, which is what makes it exact. (A chat some turn holds is not claimed at all:
      // `claimWake` skips it, and that turn's end makes it due.)
      const outcome = yield* Effect.gen(function*() {
        const known = job.transcript
        if (guard(known) === "defer") return { _tag: "Deferred" } as const
        // Read per wake, as a client turn reads it: the agent's latest definition.
        const agent = yield* agents.get(job.agent)
        // A wake turn streams like a client's: a UI following the chat sees the answer being written.
        const turn = streams.run(job.chatId, true, (live) =>
          composer.persisted({
            chatId: job.chatId,
            messages: [steer],
            context: job.context,
            agent,
            guard,
            known,
            generation: job.generation,
            settles: { id: job.id, status },
            live
          }).pipe(invokeAgent({ kind: "wake", agent: job.agent, userId: userOf(job.chatId), chatId: job.chatId, jobId: job.id })))
        return yield* withLease(repo, job.id, owner, config.leaseMs, turn).pipe(
          Effect.map(Option.getOrElse(() => ({ _tag: "LeaseLost" }) as const))
        )
      }).pipe(
        Effect.catchIf((e) => e instanceof TurnInFlight, () => Effect.succeed({ _tag: "Busy" } as const)),
        // The job went with its chat: nothing to settle or defer.
        Effect.catchIf((e) => e instanceof ChatNotFound, () => Effect.succeed({ _tag: "ChatGone" } as const)),
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause)
            ? Effect.interrupt
            : Effect.logWarning(`wake of job ${job.id} failed (${job.wakeFailures + 1} of ${config.maxWakes})`, cause).pipe(
              Effect.as({ _tag: "Failed" } as const)
            )
        )
      )
      switch (outcome._tag) {
        case "ChatGone":
          return yield* Effect.logInfo(`job ${job.id}: its chat was deleted, no steer delivered`)
        case "Answered":
          if (job.finishedAt !== undefined) recordSteerLag(job.kind, ((yield* Clock.currentTimeMillis) - job.finishedAt) / 1000)
          return yield* Effect.logDebug(`job ${job.id}: steer delivered, ${status}`)
        case "Skipped":
          return yield* Effect.logDebug(`job ${job.id}: steer delivered, ${status}`)
        case "Busy":
          // The 409: a turn holds the chat. Its end makes this wake due at once (JobsRepo.turnEnd).
          yield* repo.deferWake(job.id, owner, busyRetryMs, "busy")
          return yield* signals.wake.local
        case "Deferred":
          // An unanswered client tool call: the client's continuation ends a turn, which makes this due.
          return yield* repo.deferWake(job.id, owner, config.sweepMs * 10, "pending-call")
        case "LeaseLost":
          return yield* Effect.logWarning(`job ${job.id}: wake lease lost`)
        case "Failed": {
          const failures = job.wakeFailures + 1
          const stored = yield* chats.transcript(job.chatId).pipe(
            Effect.map((messages) => messages.some((m) => m.id === steer.id)),
            Effect.orElseSucceed(() => false)
          )
          if (failures >= config.maxWakes && stored) {
            // The steer is in the transcript (write-ahead): the chat's next turn lets the model see it.
            yield* Effect.logError(`job ${job.id}: ${failures} wake turns failed, settling without an answer`)
            return yield* repo.settle(job.id, status)
          }
          // Never settled without its steer stored: a job is not lost to a provider (or database) outage.
          return yield* repo.deferWake(job.id, owner, Math.min(30_000, 500 * 2 ** Math.min(failures, 6)), "failed")
        }
      }
    }).pipe(
      Effect.onInterrupt(() => repo.release(job.id, owner)),
      Effect.annotateLogs({ jobId: job.id, chatId: job.chatId })
    )

  const loop = yield* forkClaimLoop({
    name: "wake",
    concurrency: wakeConcurrency,
    sweepMs: config.sweepMs,
    signal: signals.wake,
    gate: signals.claims,
    claim: (free) => repo.claimWake(owner, free, config.leaseMs),
    handle: deliver
  })
  yield* Ref.set(signals.handoff, {
    owner,
    leaseMs: config.leaseMs,
    reserve: loop.reserve,
    unreserve: loop.unreserve,
    deliver: loop.hand
  })
  yield* Effect.addFinalizer(() => Ref.set(signals.handoff, undefined))
}))
