/**
 * Keep-alive pools shared by callers whose provider settings change from one
 * request to the next (the planner proxy: the active provider profile is read
 * on every request). One pool per origin, created on first use and reused
 * after; the credential travels in each request's headers, never in the pool,
 * so switching profiles (or keys) needs no new pool and no restart.
 *
 * Bounded: beyond `MAX_ORIGINS` origins the least recently used pool is closed
 * gracefully (its in-flight requests finish first). All pools are destroyed
 * when the layer's scope closes.
 */
import { Config, Context, Effect, Layer, Option } from "effect"
import type { Pool } from "undici"
import { responseLimitFor } from "./ResponseLimit.ts"
import * as UndiciPool from "./openai/UndiciPool.ts"

/** `LLM_MAX_RESPONSE_BYTES` as the current ConfigProvider has it (tests swap it). */
export const readMaxResponseBytes = Config.option(Config.String("LLM_MAX_RESPONSE_BYTES")).pipe(
  Effect.orElseSucceed(() => Option.none<string>())
)

export const MAX_ORIGINS = 16

export class ProviderPools extends Context.Service<ProviderPools, {
  /** The pool to `origin` (`https://host:port`), with no headers of its own. */
  forOrigin(origin: string): Effect.Effect<UndiciPool.UndiciPool>
  /** How many pools are open (for tests: a profile switch opens no pool per request). */
  readonly size: Effect.Effect<number>
}>()("switchboard/providers/ProviderPools") {
  static readonly layer = Layer.effect(ProviderPools, Effect.gen(function*() {
    // The planner's answers are bounded like the chat route's (main.ts has refused an invalid value already).
    const limit = responseLimitFor({ LLM_MAX_RESPONSE_BYTES: Option.getOrUndefined(yield* readMaxResponseBytes) })
    if (limit._tag === "Invalid") return yield* Effect.die(new Error(limit.message))
    // A Map keeps insertion order: re-inserting on use makes its first entry the least recently used.
    const pools = new Map<string, { readonly pool: Pool; readonly client: UndiciPool.UndiciPool }>()
    yield* Effect.addFinalizer(() =>
      Effect.promise(() => Promise.all([...pools.values()].map(({ pool }) => pool.destroy())))
    )
    return ProviderPools.of({
      forOrigin: (origin) =>
        Effect.sync(() => {
          const found = pools.get(origin)
          if (found !== undefined) {
            pools.delete(origin)
            pools.set(origin, found)
            return found.client
          }
          const pool = UndiciPool.newPool(origin)
          const entry = { pool, client: UndiciPool.wrap(pool, { headers: {}, secrets: [], maxResponseBytes: limit.bytes }) }
          pools.set(origin, entry)
          if (pools.size > MAX_ORIGINS) {
            const [oldest, evicted] = pools.entries().next().value!
            pools.delete(oldest)
            void evicted.pool.close().catch(() => undefined)
          }
          return entry.client
        }),
      size: Effect.sync(() => pools.size)
    })
  }))
}
