/**
 * Following another replica's turn (docs/streaming.md): its events read from
 * the chunk log (`TurnLog`) past the follower's position, then the next
 * `written:` notification, asked for again after a quiet while. The running
 * side — writing the log when asked — is `TurnStreams`'.
 */
import { SSE_DONE, SSE_KEEP_ALIVE, sseEvent } from "@switchboard/domain"
import { Duration, Effect, Option, Stream } from "effect"
import type { ChatKey } from "../../users/ChatKey.ts"
import { KEEP_ALIVE } from "./LiveTurn.ts"
import type { TurnLog } from "./TurnLog.ts"

/**
 * A follower on another replica that heard nothing for this long reads the log again, checks the
 * turn still runs and asks again: a notification lost while a listener reconnected costs at most this.
 */
const FOLLOWER_CHECK = Duration.millis(500)

const isTerminalEvent = (event: string) => event.startsWith(`data: {"type":"finish"`) || event.startsWith(`data: {"type":"error"`)

/** This replica's followers of turns another replica runs, woken by the log's notifications. */
export const makeFollowers = (log: TurnLog) => {
  const following = new Map<string, Set<() => void>>()

  const wakeFollowers = (payload: string) => {
    const ids = payload === "*" ? [...following.keys()] : payload.split(",")
    for (const id of ids) {
      const waiters = following.get(id)
      if (waiters === undefined) continue
      following.delete(id)
      for (const resume of waiters) resume()
    }
  }

  /** Resolves at the next notification that the turn's rows were written, or after `timeout` (false). */
  const nextWritten = (turnId: string, timeout: Duration.Duration) =>
    Effect.callback<boolean>((resume) => {
      const onWritten = () => resume(Effect.succeed(true))
      const waiters = following.get(turnId) ?? new Set()
      waiters.add(onWritten)
      following.set(turnId, waiters)
      const timer = setTimeout(() => {
        waiters.delete(onWritten)
        if (waiters.size === 0) following.delete(turnId)
        resume(Effect.succeed(false))
      }, Duration.toMillis(timeout))
      return Effect.sync(() => {
        clearTimeout(timer)
        waiters.delete(onWritten)
        if (waiters.size === 0) following.delete(turnId)
      })
    })

  /**
   * Another replica's turn, from the log: the rows past the position, then the next notification.
   * A turn that no longer holds its chat's marker and wrote no end (its replica died) ends its
   * stream with an error: the transcript holds what was stored.
   */
  const followLog = (chatId: ChatKey, turnId: string): Stream.Stream<string> => {
    interface Position {
      readonly after: number
      readonly quietMs: number
    }
    const ended = [sseEvent({ type: "error", errorText: "The turn ended without finishing (its server stopped): the transcript holds what was stored" }), SSE_DONE]
    const ask = log.askFollow(turnId).pipe(Effect.ignore)
    /** Rows read (some): their events, and the stream's end after the terminal one. */
    const page = (rows: ReadonlyArray<{ readonly seq: number; readonly event: string }>) => {
      const events = rows.map((r) => r.event)
      const last = rows[rows.length - 1]!
      return isTerminalEvent(last.event)
        ? [[...events, SSE_DONE], Option.none<Position>()] as const
        : [events, Option.some({ after: last.seq, quietMs: 0 })] as const
    }
    return Stream.paginate({ after: -1, quietMs: 0 } as Position, (position) =>
      Effect.gen(function*() {
        // The running replica writes a turn only once asked: asked at the start, and again after a quiet while.
        if (position.after === -1 && position.quietMs === 0) yield* ask
        const rows = yield* log.eventsAfter(turnId, position.after)
        if (rows.length > 0) return page(rows)
        if (position.quietMs >= Duration.toMillis(KEEP_ALIVE)) {
          return [[SSE_KEEP_ALIVE], Option.some({ after: position.after, quietMs: 0 })] as const
        }
        const arrived = yield* nextWritten(turnId, FOLLOWER_CHECK)
        if (arrived) return [[], Option.some({ after: position.after, quietMs: 0 })] as const
        if ((yield* log.markerOf(chatId)) !== turnId) {
          // The turn ended (or its replica died): what it wrote last, and its end if that is there.
          const late = yield* log.eventsAfter(turnId, position.after)
          return late.length === 0 ? [ended, Option.none<Position>()] as const : page(late)
        }
        yield* ask
        return [[], Option.some({ after: position.after, quietMs: position.quietMs + Duration.toMillis(FOLLOWER_CHECK) })] as const
      }))
  }


  return {
    /** A `written:` notification's payload (turn ids, or `*` for all): their followers look again. */
    wake: wakeFollowers,
    follow: followLog
  }
}
