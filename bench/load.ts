/**
 * The load generator: an undici Pool with one connection per in-flight request
 * and that many closed-loop workers (each sends its next request as soon as
 * the previous answer has been read). A phase stops starting requests at its
 * request count or its deadline, whichever comes first, then waits for the
 * requests in flight.
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
          const text = await response.body.text()
          if (response.statusCode >= 200 && response.statusCode <= 299) {
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
    return {
      ok,
      errors,
      elapsedMs,
      rps: ok / (elapsedMs / 1000),
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      max: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1]!,
      errorSamples
    }
  }

  close(): Promise<void> {
    return this.#pool.close()
  }
}
