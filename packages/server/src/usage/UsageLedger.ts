/**
 * This replica's count of provider calls, added to the shared hourly rows
 * about once a second (docs/usage.md).
 *
 * A call is counted in memory, under its hour and what it served, and the
 * counts go to the database in one statement per flush: a turn pays a map
 * update, not a statement, and a thousand calls of one chat in an hour are
 * one row. What a replica killed outright had not flushed yet (at most the
 * last second's calls) is not counted; a replica that stops cleanly flushes
 * before it lets go of the database. A flush that fails (the database away)
 * keeps its counts for the next one, up to `MAX_PENDING_KEYS` rows.
 */
import type { ProviderUsage, UsageKind } from "@switchboard/domain"
import { Context, Duration, Effect, Layer, Semaphore } from "effect"
import type { UsageKey, UsageTotals, UsageWindow } from "./UsageRepo.ts"
import { hourOf, UsageRepo } from "./UsageRepo.ts"

/** What a provider call serves; absent fields are not part of it. */
export interface UsageScope {
  readonly kind: UsageKind
  readonly userId?: string | undefined
  readonly chatId?: string | undefined
  readonly jobId?: string | undefined
  readonly hostId?: string | undefined
  readonly taskId?: string | undefined
  readonly profileId?: string | undefined
}

/** Rows waiting for a flush, at most: a database away for long loses counts rather than memory. */
export const MAX_PENDING_KEYS = 10_000

/** Rows a flush statement adds at most. */
const FLUSH_BATCH = 500

/** Stored fields are bounded: ids are (by their schemas), a model name from configuration is cut. */
const MAX_MODEL_CHARS = 200

/**
 * One call's tokens of a kind, at most: no model's context is near it, and a provider's absurd
 * figure (1e20) must not overflow a stored sum (`bigint`) and so fail every flush after it.
 */
export const MAX_CALL_TOKENS = 1_000_000_000

const tokens = (n: number | undefined) =>
  n === undefined || !Number.isFinite(n) ? 0 : Math.min(MAX_CALL_TOKENS, Math.max(0, Math.round(n)))

export class UsageLedger extends Context.Service<UsageLedger, {
  /**
   * Counts one call that answered (its usage when the provider reported one), at once: a map
   * update, called from the provider call's end (`telemetry/GenAi.ts`, `providerCall`).
   */
  count(scope: UsageScope, model: string, usage: ProviderUsage | undefined): void
  /** Adds what is counted to the database now. */
  readonly flush: Effect.Effect<void>
  /** The tokens of the rows `select` takes counted here and not flushed yet, since `fromHour` (a host's, a user's). */
  pending(select: (key: UsageKey) => boolean, fromHour: number): UsageWindow
}>()("switchboard/server/usage/UsageLedger") {
  static readonly make = (flushEvery: Duration.Input) => Layer.effect(UsageLedger, Effect.gen(function*() {
    const repo = yield* UsageRepo
    let counted = new Map<string, readonly [UsageKey, UsageTotals]>()
    // What a flush is writing: still this replica's to count in a budget until the database has it.
    let flushing: ReadonlyArray<readonly [UsageKey, UsageTotals]> = []
    let dropped = 0

    const add = (key: UsageKey, totals: UsageTotals, into: Map<string, readonly [UsageKey, UsageTotals]>) => {
      const id = `${key.hour}\u0000${key.kind}\u0000${key.userId}\u0000${key.chatId}\u0000${key.jobId}\u0000${key.hostId}\u0000${key.taskId}\u0000${key.profileId}\u0000${key.model}`
      const entry = into.get(id)
      if (entry !== undefined) {
        const sum = entry[1]
        sum.calls += totals.calls
        sum.inputTokens += totals.inputTokens
        sum.outputTokens += totals.outputTokens
        sum.cachedInputTokens += totals.cachedInputTokens
      } else if (into.size < MAX_PENDING_KEYS) {
        into.set(id, [key, { ...totals }])
      } else {
        dropped += totals.calls
      }
    }

    // One flush at a time: a second one (the admin route's, beside the loop's) waits for the first,
    // so `flushing` is what is in flight, and a flush that returns has the counts before it stored.
    const oneAtATime = yield* Semaphore.make(1)

    const flushOnce = Effect.suspend(() => {
      if (counted.size === 0) return Effect.void
      // In the order of their keys on every replica: two replicas' statements adding to the same rows
      // (a host's, a chat's) then lock them in one order, never each waiting for the other.
      const entries = [...counted.entries()].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0).map(([, entry]) => entry)
      counted = new Map()
      flushing = entries
      const batches: Array<Array<readonly [UsageKey, UsageTotals]>> = []
      for (let i = 0; i < entries.length; i += FLUSH_BATCH) batches.push(entries.slice(i, i + FLUSH_BATCH))
      return Effect.forEach(batches, (batch, index) =>
        repo.add(batch).pipe(
          Effect.catchCause((cause) => {
            // Kept for the next flush, added to what was counted since.
            for (const rest of batches.slice(index)) for (const [key, totals] of rest) add(key, totals, counted)
            return Effect.logWarning("token usage not flushed; kept for the next flush", cause).pipe(
              Effect.andThen(Effect.fail(undefined))
            )
          })
        ), { discard: true }).pipe(
        Effect.ignore,
        Effect.ensuring(Effect.sync(() => {
          flushing = []
        })),
        Effect.andThen(Effect.suspend(() => {
          if (dropped === 0) return Effect.void
          const lost = dropped
          dropped = 0
          return Effect.logWarning(`token usage of ${lost} provider calls not counted: ${MAX_PENDING_KEYS} rows were waiting for the database`)
        }))
      )
    }).pipe(oneAtATime.withPermits(1), Effect.uninterruptible)

    // Stopping cleanly loses nothing: the last flush runs before the database is let go (the loop
    // below is interrupted first, and a flush in progress is never cut).
    yield* Effect.addFinalizer(() => flushOnce)
    yield* Effect.forkScoped(Effect.forever(Effect.sleep(flushEvery).pipe(Effect.andThen(flushOnce))))

    return UsageLedger.of({
      count: (scope, model, usage) =>
        add({
          hour: hourOf(Date.now()),
          kind: scope.kind,
          userId: scope.userId ?? "",
          chatId: scope.chatId ?? "",
          jobId: scope.jobId ?? "",
          hostId: scope.hostId ?? "",
          taskId: scope.taskId ?? "",
          profileId: scope.profileId ?? "",
          model: model.slice(0, MAX_MODEL_CHARS)
        }, {
          calls: 1,
          inputTokens: tokens(usage?.inputTokens),
          outputTokens: tokens(usage?.outputTokens),
          cachedInputTokens: tokens(usage?.cachedInputTokens)
        }, counted),
      flush: flushOnce,
      // Counted here and not in the database yet: waiting, and being flushed (a flush that lands
      // while a budget is read may count a moment twice; never not at all).
      pending: (select, fromHour) => {
        let used = 0
        let oldestHour: number | undefined
        for (const entries of [counted.values(), flushing]) {
          for (const [key, totals] of entries) {
            const n = totals.inputTokens + totals.outputTokens
            if (key.hour < fromHour || n === 0 || !select(key)) continue
            used += n
            oldestHour = oldestHour === undefined ? key.hour : Math.min(oldestHour, key.hour)
          }
        }
        return { used, oldestHour }
      }
    })
  }))

  static readonly layer = UsageLedger.make(Duration.seconds(1))
}
