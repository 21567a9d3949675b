/**
 * Spans that cost nothing while tracing is off (`TRACING`, off by default).
 *
 * `Effect.fn(name)` and `Effect.withSpan` make a span on every call even when
 * the tracer is disabled: a no-op one, but with its stack trace captured, its
 * context added and the fiber's context swapped — about 4 µs each, measured,
 * against 0.3 µs for the call itself. The chat route makes several per
 * request. These wrappers look at the tracer first and add the span only when
 * it records.
 *
 * In the domain because every side makes such spans: the server's repositories
 * and turns, the provider adapters, the client's orchestrator loop (which asks
 * for no stack trace: `() => ({ captureStackTrace: false })`).
 */
import { Effect, References } from "effect"
import type { Tracer } from "effect"

/** `Effect.withSpan(name, options())` when tracing is on; the effect itself when it is off (`options` is not called). */
export const traced = (name: string, options?: () => Tracer.SpanOptions) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) =>
    fiber.getRef(References.TracerEnabled) ? Effect.withSpan(self, name, options?.()) : self
  )
