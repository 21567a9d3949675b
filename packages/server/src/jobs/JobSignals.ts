/**
 * "There is job work": how a job's completion reaches the wake pipeline fast,
 * without a polling interval of seconds.
 *
 * Writers `pg_notify` on the jobs channel inside the transaction that made
 * the work (PostgreSQL delivers it to every listening replica at commit) and
 * then signal their own process. On PostgreSQL each replica LISTENs on a
 * connection of its own; the embedded database is one session in one process
 * (the DATA_DIR lock), which cannot spare a connection for a listener and has
 * no other replica to hear from, so there the in-process signal is all.
 *
 * Each topic (a job to run, a wake to fire) has its own signal and payload.
 * Loops take `next` *before* looking for work and wait on it after, so a
 * signal that arrives while they look is not lost. A periodic sweep in the
 * loops backs all of this up (a dropped listener connection, expired leases).
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Deferred, Effect, Layer, Queue, Ref, Schedule } from "effect"
import { EmbeddedDatabase } from "../db/EmbeddedDatabase.ts"
import type { ClaimGate } from "./ClaimGate.ts"
import { makeClaimGate } from "./ClaimGate.ts"
import type { ClaimedWake } from "./JobsRepo.ts"
import { jobsChannel, JobsRepo } from "./JobsRepo.ts"

/**
 * What the work is: a job to run (the runner's loop) or a wake to fire (the
 * wake pipeline's). Each loop hears only its own topic: one shared signal
 * made both loops run a claim statement for every event of either, most of
 * them finding nothing.
 */
export type JobTopic = "run" | "wake"

/** One loop's signal. */
export interface JobSignal {
  /** This process's loop of the topic (call it after the commit). */
  readonly local: Effect.Effect<void>
  /** Completes at the next signal after this call. */
  readonly next: Effect.Effect<Deferred.Deferred<void>>
}

const makeSignal = Effect.gen(function*() {
  const current = yield* Ref.make(yield* Deferred.make<void>())
  return {
    local: Effect.gen(function*() {
      const fresh = yield* Deferred.make<void>()
      const previous = yield* Ref.getAndSet(current, fresh)
      yield* Deferred.succeed(previous, undefined)
    }),
    next: Ref.get(current)
  } satisfies JobSignal
})

/**
 * This process's wake loop, as the runner hands it a wake at once: the statement that stores a
 * result also takes the wake's lease for `owner` when the chat is free and the job heads its
 * queue, and returns the wake as a claim would (one claim statement and a signal fewer per job).
 */
export interface WakeHandoff {
  readonly owner: string
  readonly leaseMs: number
  /** Takes a slot of the wake loop; false when it is full (the wake then goes through the queue). */
  readonly reserve: Effect.Effect<boolean>
  readonly unreserve: Effect.Effect<void>
  /** Delivers the wake in the reserved slot. */
  readonly deliver: (wake: ClaimedWake) => Effect.Effect<void>
}

export class JobSignals extends Context.Service<JobSignals, {
  /**
   * Every replica: `pg_notify`, delivered when the current transaction commits.
   * A no-op on the embedded database (no other replica, no listener).
   */
  notify(topic: JobTopic): Effect.Effect<void>
  /** Whether `notify` reaches anyone: statements that can carry the `pg_notify` themselves ask. */
  readonly shared: boolean
  readonly run: JobSignal
  readonly wake: JobSignal
  /** Set by this process's wake pipeline once it runs. */
  readonly handoff: Ref.Ref<WakeHandoff | undefined>
  /** Whether this process still takes work: every claim and hand-off holds it; shutdown closes it first. */
  readonly claims: ClaimGate
}>()("switchboard/server/jobs/JobSignals") {
  static readonly layer = Layer.effect(JobSignals, Effect.gen(function*() {
    const repo = yield* JobsRepo
    const run = yield* makeSignal
    const wake = yield* makeSignal
    const embedded = yield* EmbeddedDatabase

    if (!embedded) {
      const pg = yield* PgClient.PgClient
      const listen = Effect.gen(function*() {
        const notifications = yield* pg.listen(jobsChannel)
        yield* Effect.logDebug("jobs: listening for notifications")
        // Whatever happened while not listening is found by the next look for work.
        yield* run.local
        yield* wake.local
        while (true) {
          const { payload } = yield* Queue.take(notifications)
          yield* payload === "wake" ? wake.local : run.local
        }
      }).pipe(
        Effect.scoped,
        Effect.tapCause((cause) => Effect.logWarning("jobs: notification listener lost, reconnecting", cause)),
        Effect.retry(Schedule.spaced("1 second"))
      )
      yield* Effect.forkScoped(listen)
    }

    return JobSignals.of({
      notify: (topic) => embedded ? Effect.void : repo.notify(topic),
      shared: !embedded,
      run,
      wake,
      handoff: yield* Ref.make<WakeHandoff | undefined>(undefined),
      claims: yield* makeClaimGate
    })
  }))
}
