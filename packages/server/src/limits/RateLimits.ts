/**
 * The shared rate limits (docs/configuration.md, "Rate limits"):
 *
 * - `CHAT_RPM`: chat turns a minute per user when the user is vouched for (a
 *   verified JWT's `sub`, or the user a backend holding `CHAT_TOKEN` names);
 *   else per bearer token — its SHA-256, never the token itself, names the
 *   bucket — or, for a request without one, per client address: the
 *   socket's peer address (no `X-Forwarded-For` is believed, so behind a
 *   proxy every client without a token shares the proxy's address and its
 *   limit);
 * - `PLANNER_HOST_RPM`: planner decisions a minute per host.
 *
 * A request over its limit is refused with 429 `rate_limited` and
 * `retryAfter` (the HTTP layer adds `Retry-After`, `http/JsonErrors.ts`)
 * before anything else runs. The counters live in the database
 * (`RateLimitsRepo.ts`), so every replica sees the same ones. An unset limit
 * costs nothing: the request runs as it is, no statement is sent, and no
 * sweep runs.
 */
import type { CurrentUser } from "@switchboard/domain"
import { RateLimited } from "@switchboard/domain"
import { Config, Context, Duration, Effect, Layer, Option, Random } from "effect"
import type { HttpServerRequest } from "effect/http"
import { createHash } from "node:crypto"
import { ChatTokenSetting } from "../http/ChatAuth.ts"
import { PER_MINUTE, wholeNumber } from "../process/Accepts.ts"
import { positiveInt, setting } from "../process/Setting.ts"
import { RateLimitsRepo } from "./RateLimitsRepo.ts"
import type { Take } from "./RateLimitsRepo.ts"

/** A limit: a whole number of requests a minute, at least 1; unset: none. */
const perMinute = (name: string) =>
  setting(
    { name, expected: PER_MINUTE, accepts: wholeNumber(1) },
    (variable) => Config.option(positiveInt(variable)).pipe(Config.map(Option.getOrUndefined))
  )

export const ChatRpmSetting = perMinute("CHAT_RPM")
export const PlannerHostRpmSetting = perMinute("PLANNER_HOST_RPM")

/** How often each replica deletes the windows no request reads any more (±20 %). */
const SWEEP_MS = 60_000

/**
 * Seconds until the next request of the bucket fits, from what the refusal saw: within the
 * current minute when only the previous minute's share is in the way (it shrinks as the
 * minute goes on), else in the next minute, once this one's share has shrunk enough.
 */
export const secondsUntilAccepted = (take: Take, limit: number): number => {
  const { current, elapsed, previous } = take
  // ceil(previous × (60 − t) / 60) + current < limit  ⇔  t ≥ 60 × (1 − (limit − current − 1) / previous)
  const at = current < limit && previous > 0
    ? 60 * (1 - (limit - current - 1) / previous)
    : 60 + 60 * (1 - (limit - 1) / Math.max(current, 1))
  return Math.max(1, Math.ceil(at - elapsed))
}

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex")

/** The bearer token of an `Authorization` header, if it has one. */
const bearerOf = (authorization: string | undefined): string | undefined => {
  if (authorization === undefined) return undefined
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization)
  return match?.[1]
}

/**
 * The chat bucket of a request: its user's when vouched for (`CurrentUser`); a header anyone can
 * change with each request is not a key. Otherwise, with `CHAT_TOKEN` set (`tokenChecked`: every request that gets
 * here carries it), its bearer token's SHA-256; else the socket's peer address. A token nobody
 * checked is not a key: a client sending a new one with every request would have a new bucket,
 * and no limit, each time.
 */
export const chatBucket = (
  request: HttpServerRequest.HttpServerRequest,
  user: CurrentUser["Service"],
  tokenChecked: boolean
): { readonly bucket: string; readonly per: string } => {
  if (user.vouched) return { bucket: `chat:user:${sha256(user.userId)}`, per: "user" }
  const token = tokenChecked ? bearerOf(request.headers["authorization"]) : undefined
  if (token !== undefined) {
    return { bucket: `chat:token:${sha256(token)}`, per: "bearer token" }
  }
  return { bucket: `chat:address:${Option.getOrElse(request.peerAddress, () => "unknown")}`, per: "client address" }
}

export class RateLimits extends Context.Service<RateLimits, {
  /** The chat turn `turn`, unless `request`'s caller (`user`) is over `CHAT_RPM`; `turn` itself when it is unset. */
  chatTurn<A, E, R>(
    request: HttpServerRequest.HttpServerRequest,
    user: CurrentUser["Service"],
    turn: Effect.Effect<A, E, R>
  ): Effect.Effect<A, E | RateLimited, R>
  /** The planner decision `decide`, unless the host is over `PLANNER_HOST_RPM`; `decide` itself when it is unset. */
  plannerDecision<A, E, R>(hostId: string, decide: Effect.Effect<A, E, R>): Effect.Effect<A, E | RateLimited, R>
}>()("switchboard/server/limits/RateLimits") {
  static readonly layer = Layer.effect(RateLimits, Effect.gen(function*() {
    const chatRpm = yield* ChatRpmSetting.config
    const hostRpm = yield* PlannerHostRpmSetting.config
    if (chatRpm === undefined && hostRpm === undefined) {
      return RateLimits.of({ chatTurn: (_, __, turn) => turn, plannerDecision: (_, decide) => decide })
    }
    const repo = yield* RateLimitsRepo
    const tokenChecked = (yield* ChatTokenSetting.config) !== undefined

    const sweepOnce = repo.prune.pipe(
      // A failed sweep (the database away for a moment) is retried at the next tick, not fatal.
      Effect.catchCause((cause) => Effect.logWarning("rate limit sweep failed", cause))
    )
    const nextDelay = Effect.map(Random.next, (r) => Duration.millis(Math.round(SWEEP_MS * (0.8 + 0.4 * r))))
    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(nextDelay, Effect.sleep).pipe(Effect.andThen(sweepOnce))))

    const admit = (bucket: string, limit: number, what: string) =>
      Effect.flatMap(repo.take(bucket, limit), (take) => {
        if (take.accepted) return Effect.void
        const retryAfter = secondsUntilAccepted(take, limit)
        return Effect.fail(new RateLimited({ error: `Rate limit exceeded: at most ${what}; retry in ${retryAfter} s`, retryAfter }))
      })

    return RateLimits.of({
      chatTurn: chatRpm === undefined ? (_, __, turn) => turn : (request, user, turn) => {
        const { bucket, per } = chatBucket(request, user, tokenChecked)
        return Effect.andThen(admit(bucket, chatRpm, `${chatRpm} chat turns a minute per ${per} (CHAT_RPM)`), turn)
      },
      plannerDecision: hostRpm === undefined ? (_, decide) => decide : (hostId, decide) =>
        Effect.andThen(
          admit(`planner:host:${hostId}`, hostRpm, `${hostRpm} planner decisions a minute per host (PLANNER_HOST_RPM)`),
          decide
        )
    })
  })).pipe(Layer.provide(RateLimitsRepo.layer))
}
