/**
 * How long the decisions of a terminal task are kept, and the sweep that
 * deletes them after (decisions are retained within a bounded window: docs/planner.md).
 *
 * `PLANNER_DECISION_RETENTION`: `N seconds|minutes|hours|days` (default
 * `7 days`). An unreadable value stops the server at start, rather than
 * deleting on a guessed window.
 *
 * Every replica sweeps on its own, every `PLANNER_PRUNE_INTERVAL_SECONDS`
 * (default 600) with ±20 % jitter so replicas started together drift apart;
 * simultaneous sweeps are harmless anyway: a batch runs only under the
 * sweep's advisory lock, and a replica that finds it taken stops sweeping
 * instead of waiting (`DecisionsRepo.pruneBatch`). One sweep deletes batches
 * until a batch comes back short; each batch is its own statement (its own
 * transaction). The first batch has
 * `PLANNER_PRUNE_BATCH_SIZE` rows (default 5000); each next one is sized from
 * the rate the last one ran at to take about `PLANNER_PRUNE_BATCH_MILLIS`
 * (default 200), growing at most 16-fold a step: few statements on a fast
 * database (each batch re-walks the dead index entries its predecessors
 * left), short ones on a slow or busy one, every row lock held well under a
 * second either way (the advisory lock, likewise).
 *
 * Token usage (docs/usage.md) is kept as long: the same sweep deletes the
 * hourly rows older than the window, in batches of `USAGE_PRUNE_BATCH`.
 */
import { Clock, Config, Context, Duration, Effect, Layer, Random } from "effect"
import { POSITIVE } from "../process/Accepts.ts"
import { setting, wholeNumberSetting } from "../process/Setting.ts"
import { DecisionsRepo } from "./DecisionsRepo.ts"
import { TasksRepo } from "../hosts/TasksRepo.ts"
import { windowStart } from "../usage/BudgetWindow.ts"
import { UsageRepo } from "../usage/UsageRepo.ts"

export const DEFAULT_RETENTION = "7 days"

/** Hourly usage rows one statement of the sweep deletes at most. */
export const USAGE_PRUNE_BATCH = 5000

const UNITS: Record<string, number> = { second: 1_000, minute: 60_000, hour: 3_600_000, day: 86_400_000 }

/** `7 days` → milliseconds; `undefined` when it is not `N seconds|minutes|hours|days`. */
export const parseRetention = (raw: string): number | undefined => {
  const match = /^\s*(\d+)\s*(second|minute|hour|day)s?\s*$/i.exec(raw)
  if (match === null) return undefined
  const ms = Number(match[1]) * UNITS[match[2]!.toLowerCase()]!
  return Number.isSafeInteger(ms) ? ms : undefined
}

export const DecisionRetentionSetting = setting(
  {
    name: "PLANNER_DECISION_RETENTION",
    expected: "N seconds, N minutes, N hours or N days",
    accepts: (value) => parseRetention(value) !== undefined
  },
  (name) => Config.String(name).pipe(Config.withDefault(DEFAULT_RETENTION))
)

export const PruneIntervalSecondsSetting = wholeNumberSetting("PLANNER_PRUNE_INTERVAL_SECONDS", POSITIVE, { min: 1 }, 600)
export const PruneBatchSizeSetting = wholeNumberSetting("PLANNER_PRUNE_BATCH_SIZE", POSITIVE, { min: 1 }, 5000)
export const PruneBatchMillisSetting = wholeNumberSetting("PLANNER_PRUNE_BATCH_MILLIS", POSITIVE, { min: 1 }, 200)

/** The next batch's rows: the last batch's rate × the time a batch should take, at most 16 × the last batch. */
export const nextBatchSize = (limit: number, tookMs: number, targetMs: number): number =>
  Math.max(1, Math.min(limit * 16, Math.floor(limit * targetMs / Math.max(tookMs, 1)), 10_000_000))

export class DecisionRetention extends Context.Service<DecisionRetention, {
  readonly retentionMs: number
  /** One sweep: every decision past the window, in batches; answers how many were deleted. */
  readonly prune: Effect.Effect<number>
  /** The hourly usage rows past the window, in batches; answers how many were deleted. */
  readonly pruneUsage: Effect.Effect<number>
}>()("switchboard/server/planner/DecisionRetention") {
  static readonly layer = Layer.effect(DecisionRetention, Effect.gen(function*() {
    const repo = yield* DecisionsRepo
    const usage = yield* UsageRepo
    const raw = yield* DecisionRetentionSetting.config
    const retentionMs = parseRetention(raw)
    if (retentionMs === undefined) {
      return yield* Effect.fail(new Error(
        `Invalid PLANNER_DECISION_RETENTION ${JSON.stringify(raw)}: expected N seconds, N minutes, N hours or N days`
      ))
    }
    const batchSize = yield* PruneBatchSizeSetting.config
    const targetMs = Math.max(1, yield* PruneBatchMillisSetting.config)
    const firstLimit = Math.max(1, batchSize)
    const prune = Effect.gen(function*() {
      let total = 0
      let limit = firstLimit
      while (true) {
        const [took, deleted] = yield* Effect.timed(repo.pruneBatch(retentionMs, limit))
        total += deleted
        if (deleted < limit) return total
        limit = nextBatchSize(limit, Duration.toMillis(took), targetMs)
      }
    }).pipe(Effect.withSpan("DecisionRetention.prune"))
    const pruneUsage = Effect.gen(function*() {
      let total = 0
      while (true) {
        const now = yield* Clock.currentTimeMillis
        // A retention shorter than a budget's window keeps the window's hours all the same.
        const deleted = yield* usage.pruneBatch(Math.min(now - retentionMs, windowStart(now)), USAGE_PRUNE_BATCH)
        total += deleted
        if (deleted < USAGE_PRUNE_BATCH) return total
      }
    })
    return DecisionRetention.of({ retentionMs, prune, pruneUsage })
  }))
}

/** The periodic sweep of this replica, for the server's lifetime. */
export const layerSweep = Layer.effectDiscard(Effect.gen(function*() {
  const retention = yield* DecisionRetention
  const tasks = yield* TasksRepo
  const seconds = yield* PruneIntervalSecondsSetting.config
  const intervalMs = Math.max(1, seconds) * 1000
  // Tasks given up on first, so that their decisions' window starts at this sweep, not the next.
  const sweepOnce = tasks.settleExhausted.pipe(
    Effect.tap((settled) => settled > 0 ? Effect.logInfo(`tasks failed after their last attempt (TASK_MAX_ATTEMPTS): ${settled}`) : Effect.void),
    Effect.andThen(retention.prune),
    Effect.tap((deleted) => deleted > 0 ? Effect.logInfo(`planner decisions pruned: ${deleted}`) : Effect.void),
    Effect.andThen(retention.pruneUsage),
    Effect.tap((deleted) => deleted > 0 ? Effect.logInfo(`hourly usage rows pruned: ${deleted}`) : Effect.void),
    // A failed sweep (the database away for a moment) is retried at the next tick, not fatal.
    Effect.catchCause((cause) => Effect.logWarning("planner decision sweep failed", cause))
  )
  const nextDelay = Effect.map(Random.next, (r) => Duration.millis(Math.round(intervalMs * (0.8 + 0.4 * r))))
  yield* Effect.forkScoped(
    Effect.forever(Effect.flatMap(nextDelay, Effect.sleep).pipe(Effect.andThen(sweepOnce)))
  )
}))
