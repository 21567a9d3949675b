/**
 * A running turn's stream, as this replica holds it (docs/streaming.md): the
 * chunks published so far, each encoded once as its SSE event, read by any
 * number of readers from any position.
 *
 * The chunks are the one buffer: a reader is only a position in them, so a
 * slow reader (its socket full, its stream not pulled) costs nothing but its
 * position, and a hundred readers cost what one does. What the buffer holds
 * is bounded by the turn: its text by the stored message's limit (a round
 * whose text outgrows it fails the turn, `TurnComposer`), its rounds by
 * `maxServerToolRounds`. It is dropped with the turn.
 *
 * A turn outlives its readers: a reader that goes away only stops reading.
 * `stop` is the one way to end a turn early; the composer watches `stopped`.
 */
import type { UiChunk } from "@switchboard/domain"
import { isTerminalChunk, SSE_DONE, SSE_KEEP_ALIVE, sseEvent } from "@switchboard/domain"
import { Duration, Effect } from "effect"
import { Readable } from "node:stream"
import type { ChatKey } from "../../users/ChatKey.ts"

/** A stream with no chunk for this long sends an SSE comment, so proxies keep it open. */
export const KEEP_ALIVE = Duration.seconds(15)

export interface LiveTurn {
  readonly chatId: ChatKey | undefined
  /** The marker's turn id, once the turn was accepted. */
  turnId: string | undefined
  /** The id under which the turn's first assistant message is stored. */
  readonly messageId: string
  /**
   * The id `start` announces: the stored one, or the message a continuation extends (the AI SDK's
   * clients append a continuation's rounds to the message its `start` names, docs/streaming.md).
   */
  readonly announcedId: string
  /**
   * Whether the provider is called streaming. A request that asked for JSON keeps the provider's
   * plain call (its answer arrives whole, as one delta); its turn can still be followed and stopped.
   */
  readonly providerStreams: boolean
  /** Every chunk published, as its SSE event, in order. */
  readonly events: Array<string>
  /** Whether the last event is the terminal one (`finish` or `error`). */
  ended: boolean
  /** Readers waiting for the next event. */
  readonly waiting: Set<() => void>
  /** Set by `stopTurn`: the composer ends the provider call and stores what it has. */
  stopped: boolean
  /** Called once at the stop: the round in flight interrupts its provider call. */
  readonly onStop: Set<() => void>
  /** Whether the provider produced its first output: a streamed request answers its 200 then (an earlier failure is its JSON error). */
  started: boolean
  /** Called once, at that first output (`markStarted`). */
  onStarted: (() => void) | undefined
}

export const makeLiveTurn = (
  chatId: ChatKey | undefined,
  messageId: string,
  providerStreams: boolean,
  announcedId: string = messageId
): Effect.Effect<LiveTurn> =>
  Effect.sync(() => ({
    chatId,
    announcedId,
    providerStreams,
    turnId: undefined,
    messageId,
    events: [],
    ended: false,
    waiting: new Set(),
    stopped: false,
    onStop: new Set(),
    started: false,
    onStarted: undefined
  }))

const wake = (live: LiveTurn) => {
  if (live.waiting.size === 0) return
  const readers = [...live.waiting]
  live.waiting.clear()
  for (const resume of readers) resume()
}

/** The provider's first output (or its answer, when it had none to stream): the stream is due. */
export const markStarted = (live: LiveTurn): void => {
  if (live.started) return
  live.started = true
  const onStarted = live.onStarted
  live.onStarted = undefined
  onStarted?.()
}

/** Asks the turn to stop: its provider call is interrupted where it is, and what it produced is stored. */
export const stopTurn = (live: LiveTurn): void => {
  if (live.stopped) return
  live.stopped = true
  for (const interrupt of live.onStop) interrupt()
}

/** Appends a chunk (nothing after the terminal one) and wakes the readers. */
export const publish = (live: LiveTurn, chunk: UiChunk): void => {
  if (live.ended) return
  live.events.push(sseEvent(chunk))
  if (isTerminalChunk(chunk)) live.ended = true
  wake(live)
}

/** Ends a stream that has no terminal chunk yet (a turn interrupted without one): readers stop. */
export const close = (live: LiveTurn): void => {
  if (live.ended) return
  live.ended = true
  wake(live)
}

/**
 * The turn's `seq`-th event as a follower reads it (a resume, on any replica). A continuation's
 * stream announces the message it extends, which its requester already holds; a follower, whose
 * client replays the stream from the start (the AI SDK resets the message a replay's `start`
 * names), is announced the continuation's own message instead, so the one it extends is left
 * whole: the two messages the transcript shows once the turn is stored (`toUiMessages`).
 */
export const followerEvent = (live: LiveTurn, seq: number): string =>
  seq === 0 && live.announcedId !== live.messageId ? sseEvent({ type: "start", messageId: live.messageId }) : live.events[seq]!

/**
 * The SSE body from the first event, then live to the end and `[DONE]`; a keep-alive comment after
 * `keepAlive` without an event; a `follower`'s events as `followerEvent` gives them. A Node stream,
 * for the response of a reader on this replica: each wake writes every event that arrived since as
 * one piece, and Node's own backpressure decides when to read more, so a reader that is not read
 * holds nothing (measured with `npm run bench`: an Effect stream here, a stage per wake, cost more
 * CPU per delta).
 */
export const eventsReadable = (live: LiveTurn, follower = false, keepAlive: Duration.Duration = KEEP_ALIVE): Readable => {
  let position = 0
  let waiting = false
  // One timer a reader, pushed back at every write (`refresh`) rather than made anew per event.
  let quiet: ReturnType<typeof setTimeout> | undefined
  const onEvent = () => {
    waiting = false
    pump()
  }
  const stopWaiting = () => {
    if (waiting) live.waiting.delete(onEvent)
    waiting = false
  }
  const finish = () => {
    stopWaiting()
    if (quiet !== undefined) clearTimeout(quiet)
    quiet = undefined
  }
  const readable: Readable = new Readable({
    read() {
      pump()
    },
    destroy(error, callback) {
      finish()
      callback(error)
    }
  })
  const onQuiet = () => {
    if (readable.destroyed || quiet === undefined) return
    quiet.refresh()
    readable.push(SSE_KEEP_ALIVE)
  }
  const pump = (): void => {
    if (readable.destroyed) return
    if (position < live.events.length || live.ended) {
      stopWaiting()
      const fresh = position >= live.events.length
        ? ""
        : follower && position === 0
        ? followerEvent(live, 0) + live.events.slice(1).join("")
        : live.events.slice(position).join("")
      position = live.events.length
      if (live.ended) {
        finish()
        readable.push(fresh + SSE_DONE)
        readable.push(null)
        return
      }
      quiet?.refresh()
      // Node asks again (`read`) while it wants more; a full buffer waits for its reader.
      readable.push(fresh)
      return
    }
    if (!waiting) {
      waiting = true
      live.waiting.add(onEvent)
    }
    quiet ??= setTimeout(onQuiet, Duration.toMillis(keepAlive))
  }
  return readable
}
