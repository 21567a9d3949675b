/**
 * Admission, said out loud (docs/configuration.md, "Concurrency"): a replica
 * runs every chat turn and planner decision it accepts at once — nothing in
 * front of the provider queues one behind another's call — up to a stated
 * limit, past which a new one is refused at once with 503 `overloaded` and
 * `Retry-After`, never left to wait without a word.
 *
 * - `MAX_CONCURRENT_TURNS` (default 5000): client turns in flight, streamed or
 *   not, from their admission to their end (a streamed turn outlives its
 *   request: its place is held until the turn itself ends). Wake turns and
 *   sub-agent steps are the job pipeline's, bounded by `JOB_CONCURRENCY`.
 * - `PLANNER_MAX_CONCURRENT_DECISIONS` (default 5000): planner decisions in
 *   flight, a limit of their own so a fleet of hosts never takes a user's place.
 *
 * The limits are this replica's own (its memory and sockets), so the counts
 * are in memory: a replica knows what it runs, and a client refused by one
 * may be served by another. `/metrics` shows both counts and the refusals.
 */
import { Overloaded } from "@switchboard/domain"
import { Config, Context, Effect, Layer } from "effect"
import type { AdmittedKind } from "../telemetry/Metrics.ts"
import { POSITIVE, wholeNumber } from "../process/Accepts.ts"
import { positiveInt, setting } from "../process/Setting.ts"
import { recordInFlight, recordOverloaded } from "../telemetry/Metrics.ts"

const limit = (name: string) =>
  setting(
    { name, expected: `${POSITIVE} (default 5000)`, accepts: wholeNumber(1) },
    (variable) => positiveInt(variable).pipe(Config.withDefault(5_000))
  )

export const MaxConcurrentTurnsSetting = limit("MAX_CONCURRENT_TURNS")
export const MaxConcurrentDecisionsSetting = limit("PLANNER_MAX_CONCURRENT_DECISIONS")

/**
 * The wait a refusal suggests. Places free up as turns end — a replica at its limit ends many every
 * second — so a client asks again soon; one second is also the least `Retry-After` can say.
 */
export const RETRY_AFTER_SECONDS = 1

/** A place taken: `release` gives it back, once, however often it is called. */
export interface Place {
  readonly release: Effect.Effect<void>
}

interface Gate {
  readonly enter: Effect.Effect<Place, Overloaded>
  readonly inFlight: () => number
}

const makeGate = (kind: AdmittedKind, max: number, variable: string, what: string): Gate => {
  let count = 0
  recordInFlight(kind, 0)
  const refusal = () => {
    recordOverloaded(kind)
    return new Overloaded({
      error: `This replica is at its limit of ${max} ${what} in flight (${variable}): retry in ${RETRY_AFTER_SECONDS} s`,
      retryAfter: RETRY_AFTER_SECONDS
    })
  }
  const enter = Effect.suspend(() => {
    if (count >= max) return Effect.fail(refusal())
    count++
    recordInFlight(kind, count)
    let held = true
    return Effect.succeed<Place>({
      release: Effect.sync(() => {
        if (!held) return
        held = false
        count--
        recordInFlight(kind, count)
      })
    })
  })
  return { enter, inFlight: () => count }
}

export class Admission extends Context.Service<Admission, {
  /** A place for a client turn, or `Overloaded` at once. The caller releases it when the turn ends. */
  readonly enterTurn: Effect.Effect<Place, Overloaded>
  /** `turn` in a place of its own, released when it ends however it ends. */
  turn<A, E, R>(turn: Effect.Effect<A, E, R>): Effect.Effect<A, E | Overloaded, R>
  /** `decide` in a planner decision's place, released when it ends. */
  decision<A, E, R>(decide: Effect.Effect<A, E, R>): Effect.Effect<A, E | Overloaded, R>
  /** Client turns in flight on this replica now. */
  readonly turnsInFlight: () => number
}>()("switchboard/server/limits/Admission") {
  static readonly layer = Layer.effect(Admission, Effect.gen(function*() {
    const turns = makeGate("turn", yield* MaxConcurrentTurnsSetting.config, MaxConcurrentTurnsSetting.name, "turns")
    const decisions = makeGate(
      "decision",
      yield* MaxConcurrentDecisionsSetting.config,
      MaxConcurrentDecisionsSetting.name,
      "planner decisions"
    )
    const within = (gate: Gate) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.acquireUseRelease(gate.enter, () => effect, (place) => place.release)
    return Admission.of({
      enterTurn: turns.enter,
      turn: within(turns),
      decision: within(decisions),
      turnsInFlight: turns.inFlight
    })
  }))
}
