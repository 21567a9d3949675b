/**
 * The bench's reading of server-sent events, for the stream case: the load
 * generator reads the answers with it (`deltaReader`), and the SSE relay
 * (`sse-relay.ts`, the floor) reads the upstream's with it. Both read the
 * same way, so neither side of the comparison pays for a different parser.
 *
 * Only what the bench's own producers write: `\n` line ends, `data:` lines
 * (comments and other fields ignored).
 */
import { performance } from "node:perf_hooks"
import type { BodyReader } from "./load.ts"

/** Fed the body's bytes as they arrive; calls `onData` with each complete event's data (its `data:` lines joined). */
export const sseEvents = (onData: (data: string) => void) => {
  const decoder = new TextDecoder()
  let buffer = ""
  return (bytes: Uint8Array) => {
    buffer += decoder.decode(bytes, { stream: true })
    let end = buffer.indexOf("\n\n")
    while (end !== -1) {
      let data: string | undefined
      for (const line of buffer.slice(0, end).split("\n")) {
        if (!line.startsWith("data:")) continue
        const value = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5)
        data = data === undefined ? value : `${data}\n${value}`
      }
      buffer = buffer.slice(end + 2)
      if (data !== undefined) onData(data)
      end = buffer.indexOf("\n\n")
    }
  }
}

/** The wall clock in ms with a fraction, comparable across processes of one machine (what the upstream stamps its deltas with). */
export const wallClockMs = () => performance.timeOrigin + performance.now()

/**
 * Reads one streamed answer whose deltas carry the upstream's send times (`wallClockMs`, each
 * followed by a space: a delta that merged several still reads) and reports each one's latency
 * (arrival of the bytes − send time). `stamps` gives a parsed event's delta text, `problemOf` what
 * makes the answer fail. The answer is whole when it ends with `[DONE]` and nothing was wrong.
 */
const stampReader = <A>(
  report: (latencyMs: number) => void,
  stamps: (event: A) => string | undefined,
  problemOf: (event: A) => string | undefined = () => undefined
): BodyReader => {
  let arrived = 0
  let done = false
  let problem: string | undefined
  const feed = sseEvents((data) => {
    if (data === "[DONE]") {
      done = true
      return
    }
    const event = JSON.parse(data) as A
    problem ??= problemOf(event)
    const text = stamps(event)
    if (text !== undefined) for (const stamp of text.split(" ")) if (stamp !== "") report(arrived - Number(stamp))
  })
  return {
    chunk: (bytes) => {
      arrived = wallClockMs()
      feed(bytes)
    },
    end: () => problem ?? (done ? undefined : "the stream ended before [DONE]")
  }
}

/** The server's answer (or the relay's copy of its shape), a UI message stream: the `text-delta` chunks timed, an `error` chunk a failure. */
export const deltaReader = (report: (latencyMs: number) => void): BodyReader =>
  stampReader<{ type?: string; delta?: string; errorText?: string }>(
    report,
    (chunk) => (chunk.type === "text-delta" ? chunk.delta : undefined),
    (chunk) => (chunk.type === "error" ? `error chunk: ${chunk.errorText}` : undefined)
  )

/**
 * The mock's own stream (Chat Completions chunks, `bench/upstream.ts`), read the way `deltaReader`
 * reads a UI message stream. With no process between, its latencies are the harness's own: the
 * mock's timers and writes, the load generator's reads, and the two sharing the machine's cores
 * with whatever else runs.
 */
export const completionDeltaReader = (report: (latencyMs: number) => void): BodyReader =>
  stampReader<{ choices?: Array<{ delta?: { content?: string } }> }>(report, (chunk) => chunk.choices?.[0]?.delta?.content)
