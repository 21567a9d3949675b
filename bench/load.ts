/**
 * The load generator: an undici Pool with one connection per in-flight request
 * and that many closed-loop workers (each sends its next request as soon as
 * the previous answer has been read). A phase stops starting requests at its
 * request count or its deadline, whichever comes first, then waits for the
 * requests in flight.
 *
 * A target whose answers stream (SSE) names a `reader`: each answer is then
 * read piece by piece as it arrives, and the latencies the reader reports (one
 * per event it times: a streamed delta's arrival − its send time) make the
 * phase's `events` percentiles.
 */
import { performance } from "node:perf_hooks"
import { Pool } from "undici"

export interface Target {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  readonly path: string
  /** The JSON body of the next request of closed-loop worker `worker` (called once per request). */
  readonly body: (worker: number) => string
  /** Extra headers of worker `worker`'s requests (a host's own token, say). */
  readonly headers?: (worker: number) => Readonly<Record<string, string>>
  /** Reads a 2xx answer as it streams in; `report` takes the latency (ms) of each event it times. */
  readonly reader?: (report: (latencyMs: number) => void) => BodyReader
}

/** One streamed answer's reader. */
export interface BodyReader {
  /** A piece of the body, as it arrived. */
  chunk(bytes: Buffer): void
  /** The body has ended: what was wrong with the answer, or undefined when it was whole. */
  end(): string | undefined
}

/** Percentiles of the latencies a target's `reader` reported during a phase, in ms. */
export interface EventLatencies {
  readonly count: number
  readonly p50: number
  readonly p99: number
  readonly max: number
}

export interface Phase {
  readonly durationMs: number
  readonly maxRequests: number
}

export interface PhaseResult {
  /** Answers with a 2xx status. */
  readonly ok: number
  /** Non-2xx answers and failed requests. */
  readonly errors: number
  readonly elapsedMs: number
  /** Successful requests per second over the whole phase. */
  readonly rps: number
  /** Latency percentiles of the successful requests, in ms. */
  readonly p50: number
  readonly p99: number
  readonly max: number
  /** The first few error descriptions. */
  readonly errorSamples: ReadonlyArray<string>
  /** With a `reader`: the events it timed (the events of failed answers included). */
  readonly events?: EventLatencies
}

const HEADERS = { "content-type": "application/json", accept: "application/json" }

/** Nearest-rank percentile of an ascending array. */
export const percentile = (sorted: Float64Array, p: number): number =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!

export class LoadGenerator {
  readonly #pool: Pool
  readonly #target: Target
  readonly #concurrency: number

  constructor(target: Target, concurrency: number) {
    this.#target = target
    this.#concurrency = concurrency
    this.#pool = new Pool(target.origin, { connections: concurrency, pipelining: 1, keepAliveTimeout: 60_000 })
  }

  /** One request, answer returned as text (for the smoke check before a target is measured). */
  async once(): Promise<{ readonly status: number; readonly text: string }> {
    const response = await this.#pool.request({
      method: "POST",
      path: this.#target.path,
      headers: this.#headers(0),
      body: this.#target.body(0)
    })
    return { status: response.statusCode, text: await response.body.text() }
  }

  #headers(worker: number): Record<string, string> {
    return this.#target.headers === undefined ? HEADERS : { ...HEADERS, ...this.#target.headers(worker) }
  }

  async run(phase: Phase): Promise<PhaseResult> {
    const latencies = new Float64Array(phase.maxRequests)
    const errorSamples: Array<string> = []
    const eventLatencies: Array<number> = []
    const report = (latencyMs: number) => void eventLatencies.push(latencyMs)
    const reader = this.#target.reader
    let started = 0
    let ok = 0
    let errors = 0
    const t0 = performance.now()
    const deadline = t0 + phase.durationMs

    const recordError = (description: string) => {
      errors++
      if (errorSamples.length < 3) errorSamples.push(description)
    }

    const worker = async (_: unknown, index: number) => {
      while (started < phase.maxRequests && performance.now() < deadline) {
        started++
        const begin = performance.now()
        try {
          const response = await this.#pool.request({
            method: "POST",
            path: this.#target.path,
            headers: this.#headers(index),
            body: this.#target.body(index)
          })
          const success = response.statusCode >= 200 && response.statusCode <= 299
          if (success && reader !== undefined) {
            const read = reader(report)
            for await (const bytes of response.body) read.chunk(bytes as Buffer)
            const problem = read.end()
            if (problem === undefined) latencies[ok++] = performance.now() - begin
            else recordError(problem)
            continue
          }
          const text = await response.body.text()
          if (success) {
            latencies[ok++] = performance.now() - begin
          } else {
            recordError(`HTTP ${response.statusCode}: ${text.slice(0, 200)}`)
          }
        } catch (error) {
          recordError(String(error))
        }
      }
    }

    await Promise.all(Array.from({ length: this.#concurrency }, worker))
    const elapsedMs = performance.now() - t0
    const sorted = latencies.subarray(0, ok).sort()
    const events = reader === undefined ? undefined : Float64Array.from(eventLatencies).sort()
    return {
      ok,
      errors,
      elapsedMs,
      rps: ok / (elapsedMs / 1000),
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      max: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1]!,
      errorSamples,
      ...(events === undefined ? {} : {
        events: {
          count: events.length,
          p50: percentile(events, 0.5),
          p99: percentile(events, 0.99),
          max: events.length === 0 ? Number.NaN : events[events.length - 1]!
        }
      })
    }
  }

  close(): Promise<void> {
    return this.#pool.close()
  }
}
