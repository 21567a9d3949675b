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
 * Loops take `next` *before* looking for work and wait on it after, so a
 * signal that arrives while they look is not lost. A periodic sweep in the
 * loops backs all of this up (a dropped listener connection, expired leases).
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Deferred, Effect, Layer, Queue, Ref, Schedule } from "effect"
import { EmbeddedDatabase } from "../db/EmbeddedDatabase.ts"
import { jobsChannel, JobsRepo } from "./JobsRepo.ts"

export class JobSignals extends Context.Service<JobSignals, {
  /** Every replica: `pg_notify`, delivered when the current transaction commits. */
  readonly notify: Effect.Effect<void>
  /** This process's loops (call it after the commit). */
  readonly local: Effect.Effect<void>
  /** Completes at the next signal after this call. */
  readonly next: Effect.Effect<Deferred.Deferred<void>>
}>()("switchboard/server/jobs/JobSignals") {
  static readonly layer = Layer.effect(JobSignals, Effect.gen(function*() {
    const repo = yield* JobsRepo
    const current = yield* Ref.make(yield* Deferred.make<void>())
    const local = Effect.gen(function*() {
      const fresh = yield* Deferred.make<void>()
      const previous = yield* Ref.getAndSet(current, fresh)
      yield* Deferred.succeed(previous, undefined)
    })

    if (!(yield* EmbeddedDatabase)) {
      const pg = yield* PgClient.PgClient
      const listen = Effect.gen(function*() {
        const notifications = yield* pg.listen(jobsChannel)
        yield* Effect.logDebug("jobs: listening for notifications")
        // Whatever happened while not listening is found by the next look for work.
        yield* local
        while (true) {
          yield* Queue.take(notifications)
          yield* local
        }
      }).pipe(
        Effect.scoped,
        Effect.tapCause((cause) => Effect.logWarning("jobs: notification listener lost, reconnecting", cause)),
        Effect.retry(Schedule.spaced("1 second"))
      )
      yield* Effect.forkScoped(listen)
    }

    return JobSignals.of({
      notify: repo.notify,
      local,
      next: Ref.get(current)
    })
  }))
}
