/**
 * Streamed answers of the fake providers: when a request asks for a stream
 * (`stream: true`), `FakeOpenAi` and `FakeAnthropic` turn the answer they
 * would have sent whole into their API's server-sent events (text split into
 * deltas, each tool call's arguments too, the usage), and this module plays
 * those events: paced, cut, failed or timed as the test asks. It knows no
 * provider's API; each fake frames its own events.
 *
 * Options (`FakeStreamOptions`) apply at three levels, the later overriding:
 * the fake's start (`start({ streaming })`), `fake.streamWith(options)` (until
 * `reset`), and one reply (`reply.streamed(reply, options)`).
 *
 * ```ts
 * // The benchmark's provider: 50 deltas, 20 ms apart, each send time reported.
 * const fake = await FakeOpenAi.start({ streaming: { textDeltas: 50, intervalMs: 20, onDelta: (d) => sent.push(d) } })
 * // A stream the provider cuts after 2 deltas (no end marker, the connection destroyed).
 * fake.enqueue(FakeOpenAi.reply.streamed(FakeOpenAi.reply.text("one two three"), { cutAfter: 2 }))
 * // Did the client close the connection before the end? How far did the stream get?
 * fake.chatRequests()[0]?.aborted; fake.chatRequests()[0]?.streamed?.deltasSent
 * ```
 *
 * A "delta" is an event carrying a piece of text or of a tool call's
 * arguments; the other events (the head, a call's start, the end, the usage)
 * are written as soon as they come.
 */
import type { ServerResponse } from "node:http"
import type { FakeStreamProgress, RecordedRequest } from "./RecordedRequest.ts"

export type { FakeStreamProgress } from "./RecordedRequest.ts"

export interface FakeStreamOptions {
  /** Into how many deltas an answer's text is split (default 4; never more than it has characters). */
  readonly textDeltas?: number
  /** Into how many deltas each tool call's arguments are split (default 3; never more than they have characters). */
  readonly argumentDeltas?: number
  /** The pause before each delta but the first, in ms (default 0: the whole stream at once). */
  readonly intervalMs?: number
  /** Destroy the connection right after this many deltas: a stream the provider cut, without its end. */
  readonly cutAfter?: number
  /** After this many deltas, the API's error event (the fake's: an overload) and the end of the body. */
  readonly errorAfter?: number
  /**
   * Called as each delta is written (handed to the socket), for latency measurements: its index
   * (from 0), its kind and text, and `sentAt`, the wall-clock time in milliseconds with sub-ms
   * precision (`performance.timeOrigin + performance.now()`, comparable between processes on one
   * machine). Text deltas are distinct when the text's words are (e.g. `"w0 w1 w2 …"`), so a
   * receiver can match each one it sees to its send time.
   */
  readonly onDelta?: (sent: FakeDeltaSent) => void
}

export interface FakeDeltaSent {
  readonly request: RecordedRequest
  readonly index: number
  readonly kind: "text" | "arguments"
  readonly text: string
  readonly sentAt: number
}

/** One server-sent event; `delta` marks those carrying a piece of text or arguments. */
export interface FakeSseEvent {
  readonly event?: string
  readonly data: string
  readonly delta?: { readonly kind: "text" | "arguments"; readonly text: string }
}


/** The `sse` reply (see `FakeReply`): a 200 `text/event-stream` of these events. */
export interface FakeSseReply {
  readonly type: "sse"
  readonly events: ReadonlyArray<FakeSseEvent>
  readonly options: FakeStreamOptions
  /** Wait this long before answering at all (like a JSON reply's `delayMs`). */
  readonly delayMs?: number
}

/** `text` in `n` pieces of near-equal length (whole code points), at most one per character; `""` is no piece. */
export const splitInto = (text: string, n: number): Array<string> => {
  const chars = Array.from(text)
  const count = Math.max(1, Math.min(Math.floor(n), chars.length))
  const pieces: Array<string> = []
  for (let i = 0; i < count && chars.length > 0; i++) {
    pieces.push(chars.slice(Math.floor(i * chars.length / count), Math.floor((i + 1) * chars.length / count)).join(""))
  }
  return pieces
}

/** The text's deltas, as `textDeltas` asks. */
export const textPieces = (text: string, options: FakeStreamOptions): Array<string> => splitInto(text, options.textDeltas ?? 4)

/** A tool call's argument deltas, as `argumentDeltas` asks. */
export const argumentPieces = (args: string, options: FakeStreamOptions): Array<string> =>
  splitInto(args, options.argumentDeltas ?? 3)

/**
 * The reply streaming `events`: with `errorAfter`, the events up to that many deltas, then the
 * API's `error` event, and nothing more.
 */
export const sseReply = (
  events: ReadonlyArray<FakeSseEvent>,
  options: FakeStreamOptions,
  error: FakeSseEvent,
  delayMs?: number
): FakeSseReply => {
  const limit = options.errorAfter
  let kept = events
  if (limit !== undefined) {
    let deltas = 0
    const end = events.findIndex((e) => e.delta !== undefined && ++deltas > limit)
    kept = [...(end === -1 ? events : events.slice(0, end)), error]
  }
  return { type: "sse", events: kept, options, ...(delayMs !== undefined ? { delayMs } : {}) }
}

const frame = (event: FakeSseEvent): string => `${event.event !== undefined ? `event: ${event.event}\n` : ""}data: ${event.data}\n\n`

/** The wall clock with sub-millisecond precision. */
const now = (): number => performance.timeOrigin + performance.now()

/**
 * Plays a streamed reply, recording its progress in `request.streamed`. `serverCut` is called
 * before the fake itself destroys the connection, so that it is not taken for the client's doing.
 */
export const playSse = (res: ServerResponse, reply: FakeSseReply, request: RecordedRequest, serverCut: () => void): void => {
  const { events, options } = reply
  const progress: FakeStreamProgress = { deltasSent: 0, finished: false }
  request.streamed = progress
  const intervalMs = options.intervalMs ?? 0
  let next = 0
  let paused = false

  const write = () => {
    while (next < events.length) {
      if (res.destroyed) return
      const event = events[next]!
      if (event.delta !== undefined && progress.deltasSent > 0 && intervalMs > 0 && !paused) {
        paused = true
        setTimeout(write, intervalMs).unref()
        return
      }
      paused = false
      next++
      const delta = event.delta
      if (delta === undefined) {
        res.write(frame(event))
        continue
      }
      const index = progress.deltasSent++
      const cut = options.cutAfter !== undefined && progress.deltasSent >= options.cutAfter
      res.write(frame(event), (error) => {
        if (error === undefined || error === null) options.onDelta?.({ request, index, kind: delta.kind, text: delta.text, sentAt: now() })
        if (cut) {
          serverCut()
          res.socket?.destroy()
        }
      })
      // The cut waits for the delta to be handed to the socket: the client receives what came before it.
      if (cut) return
    }
    progress.finished = true
    res.end()
  }

  const start = () => {
    if (res.destroyed) return
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
    write()
  }
  if (reply.delayMs === undefined) start()
  else setTimeout(start, reply.delayMs).unref()
}
