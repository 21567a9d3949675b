/**
 * The scale case's load: N streamed turns sent at the same moment, each read
 * as it arrives (`sse.ts`) and timed on this process's clock — its first
 * `text-delta` from the request's send, and the gap between each two of its
 * deltas. A turn is complete when its answer was a 200 whose stream ended
 * with a `finish` chunk and `data: [DONE]`, with no `error` chunk.
 *
 * Unlike `load.ts` (closed loop, a fixed number of connections), every turn
 * has a connection of its own, opened at once: an undici Pool with no cap on
 * its connections, so that the load generator is never what limits the turns
 * in flight.
 */
import { performance } from "node:perf_hooks"
import { Pool } from "undici"
import { percentile } from "./load.ts"
import { sseEvents } from "./sse.ts"

export interface BurstSpec {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  readonly path: string
  readonly turns: number
  /** The JSON body of turn `i` (a chat of its own each). */
  readonly body: (i: number) => string
  readonly headers: Readonly<Record<string, string>>
  /** A turn not complete this long after the burst began is cut off and counted incomplete. */
  readonly deadlineMs: number
}

export interface BurstResult {
  readonly turns: number
  readonly complete: number
  /** Each turn's first delta: its arrival − its request's send, ms, ascending (turns that had one). */
  readonly firstDeltaMs: Float64Array
  /** Every gap between two consecutive deltas of one turn, over all turns, ms, ascending. */
  readonly gapMs: Float64Array
  readonly deltas: number
  /** From the first send to the end of the last answer, ms. */
  readonly elapsedMs: number
  /** Incomplete turns by what went wrong (`HTTP 503`, `cut before [DONE]`, …). */
  readonly problems: Readonly<Record<string, number>>
  /** The first few problems, with what the answer said. */
  readonly problemSamples: ReadonlyArray<string>
}

/**
 * A percentile of the first delta over all the turns sent: a turn that never had one counts as
 * later than any that did (Infinity), so failures cannot flatter the figure.
 */
export const firstDeltaP = (r: BurstResult, p: number) => {
  const rank = Math.min(r.turns, Math.max(1, Math.ceil(p * r.turns)))
  return rank <= r.firstDeltaMs.length ? r.firstDeltaMs[rank - 1]! : Number.POSITIVE_INFINITY
}
export const gapP = (r: BurstResult, p: number) => percentile(r.gapMs, p)

export const burst = async (spec: BurstSpec): Promise<BurstResult> => {
  // A SYN the target's full accept queue dropped is sent again 1, 3, 7 s later: the connection may take
  // that long, and the turn is the target's to lose by the deadline, not undici's 10 s connect timeout.
  const pool = new Pool(spec.origin, { connections: null, pipelining: 1, connect: { timeout: spec.deadlineMs } })
  const abort = new AbortController()
  const firsts: Array<number> = []
  const gaps: Array<number> = []
  const problems: Record<string, number> = {}
  const problemSamples: Array<string> = []
  let complete = 0
  let deltas = 0
  const fail = (kind: string, detail: string) => {
    problems[kind] = (problems[kind] ?? 0) + 1
    if (problemSamples.length < 3) problemSamples.push(`${kind}: ${detail}`)
  }

  const turn = async (body: string) => {
    const sentAt = performance.now()
    try {
      const response = await pool.request({ method: "POST", path: spec.path, headers: spec.headers, body, signal: abort.signal })
      if (response.statusCode !== 200) {
        const text = await response.body.text()
        return fail(`HTTP ${response.statusCode}`, text.slice(0, 200))
      }
      let arrived = 0
      let last: number | undefined
      let finished = false
      let done = false
      let problem: string | undefined
      const feed = sseEvents((data) => {
        if (data === "[DONE]") {
          done = true
          return
        }
        const chunk = JSON.parse(data) as { type?: string; errorText?: string }
        if (chunk.type === "text-delta") {
          deltas++
          if (last === undefined) firsts.push(arrived - sentAt)
          else gaps.push(arrived - last)
          last = arrived
        } else if (chunk.type === "finish") {
          finished = true
        } else if (chunk.type === "error") {
          problem ??= String(chunk.errorText)
        }
      })
      for await (const bytes of response.body) {
        arrived = performance.now()
        feed(bytes as Buffer)
      }
      if (problem !== undefined) fail("error chunk", problem)
      else if (!finished || !done) fail("cut before finish and [DONE]", `finish ${finished}, [DONE] ${done}`)
      else complete++
    } catch (error) {
      if (abort.signal.aborted) fail(`not complete within ${spec.deadlineMs / 1000} s`, String(error))
      else fail("request failed", String(error))
    }
  }

  // Bodies first, so that the N sends follow each other with nothing in between.
  const bodies = Array.from({ length: spec.turns }, (_, i) => spec.body(i))
  const deadline = setTimeout(() => abort.abort(), spec.deadlineMs)
  const t0 = performance.now()
  await Promise.all(bodies.map(turn))
  const elapsedMs = performance.now() - t0
  clearTimeout(deadline)
  await pool.destroy()
  return {
    turns: spec.turns,
    complete,
    firstDeltaMs: Float64Array.from(firsts).sort(),
    gapMs: Float64Array.from(gaps).sort(),
    deltas,
    elapsedMs,
    problems,
    problemSamples
  }
}
