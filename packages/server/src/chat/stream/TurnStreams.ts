/**
 * The running turns of this replica, and how any replica reaches any turn
 * (docs/streaming.md): follow a chat's running turn from its first chunk,
 * stop it, start one that outlives the request that started it.
 *
 * A turn runs on one replica and its stream is held there (`LiveTurn`); the
 * replica's readers read it from memory. On PostgreSQL a reader on another
 * replica asks for the turn (`follow:<turnId>`), and from then on the running
 * replica writes its stream to `turn_chunks` (`TurnLog`), from the first
 * chunk; a turn nobody follows from elsewhere — nearly all — writes nothing.
 * Stops travel by notification too. The embedded database is
 * one process (its DATA_DIR lock): there, every turn is this replica's.
 *
 * What is in memory here is only this replica's own turns and readers;
 * which turn a chat is running is the marker's to say (`chat_turns`).
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Deferred, Duration, Effect, Exit, Layer, Option, Queue, Schedule, Schema } from "effect"
import type { UiChunk } from "@switchboard/domain"
import { UiChunk as UiChunkSchema } from "@switchboard/domain"
import type { Stream } from "effect"
import { SqlClient } from "effect/sql"
import type { Readable } from "node:stream"
import { EmbeddedDatabase } from "../../db/EmbeddedDatabase.ts"
import { ProviderError, toWireError } from "@switchboard/providers"
import type { LiveTurn } from "./LiveTurn.ts"
import { close, eventsReadable, followerEvent, makeLiveTurn, publish, stopTurn } from "./LiveTurn.ts"
import { makeFollowers } from "./FollowLog.ts"
import { newMessageId } from "../MessageIds.ts"
import type { LogRow } from "./TurnLog.ts"
import { FLUSH_EVERY, KEEP_ENDED_MS, makeTurnLog, turnsChannel } from "./TurnLog.ts"
import type { ChatKey } from "../../users/ChatKey.ts"

/** How long a stop waits for the stopped turn to store its answer and free the chat. */
const STOP_WAIT = Duration.seconds(10)
/** How often a stop asked of another replica looks whether the chat is free, and asks again after how many looks. */
const STOP_CHECK = Duration.millis(25)
const STOP_ASK_EVERY = 20
/** The largest announcement sent to another replica (PostgreSQL's notification payloads stop at 8000 bytes). */
const MAX_ANNOUNCEMENT_BYTES = 7_500

const Announcement = Schema.fromJsonString(Schema.Struct({ turnId: Schema.String, chunks: Schema.Array(UiChunkSchema) }))
const decodeAnnouncement = (payload: string) => Option.getOrUndefined(Schema.decodeUnknownOption(Announcement)(payload))

/** How often ended turns kept for late followers are swept while no turn is being written. */
const SWEEP_ENDED_EVERY_MS = 1_000
interface Running {
  readonly live: LiveTurn
  /** Completed when the turn's effect ended (its answer stored or not). */
  readonly done: Deferred.Deferred<void>
}

export class TurnStreams extends Context.Service<TurnStreams, {
  /**
   * Runs `turn` with a live stream, in the caller's fiber: followers and stops find it once the
   * turn holds its chat's marker. Interrupting the caller interrupts the turn.
   */
  run<A, E>(chatId: ChatKey | undefined, providerStreams: boolean, turn: (live: LiveTurn) => Effect.Effect<A, E>): Effect.Effect<A, E>
  /**
   * Starts `turn` on this replica, detached from the caller: it runs to its end whoever reads it.
   * Answers once the provider produced its first output (the stream to read), or fails with the
   * turn's error when it failed before (a 409, a 502 the caller answers as JSON).
   */
  start<A, E>(
    chatId: ChatKey | undefined,
    turn: (live: LiveTurn) => Effect.Effect<A, E>,
    /** The message a continuation extends, announced by `start` instead of the stored id. */
    announce?: string
  ): Effect.Effect<LiveTurn, E>
  /** The SSE body of the chat's running turn from its first chunk, live to its end; none when no turn runs. */
  follow(chatId: ChatKey): Effect.Effect<Stream.Stream<string> | Readable | undefined>
  /** Stops the chat's running turn, on whichever replica, and waits (bounded) for the chat to be free. */
  stop(chatId: ChatKey): Effect.Effect<boolean>
  /**
   * Sends `chunks` on the chat's running turn's stream, on whichever replica runs it (a sub-agent job's
   * call waiting for the user's approval, docs/subagents.md); nothing when no turn runs. Best effort:
   * what a client must not miss is elsewhere too (the job record).
   */
  announce(chatId: ChatKey, chunks: ReadonlyArray<UiChunk>): Effect.Effect<void>
}>()("switchboard/server/chat/TurnStreams") {
  static readonly layer = Layer.effect(TurnStreams, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const embedded = yield* EmbeddedDatabase
    const log = makeTurnLog(sql)
    const followers = makeFollowers(log)
    const scope = yield* Effect.scope

    const byChat = new Map<string, Set<Running>>()
    /** This replica's turns followed from elsewhere whose events the log has not all written yet, with how many it has. */
    const unwritten = new Map<LiveTurn, number>()
    /** Turns whose events this replica writes (or wrote, until their rows go). */
    const logged = new Set<string>()
    /** Turns ended here lately: a follower that asks just after the end still gets them written. */
    const recent = new Map<string, { readonly live: LiveTurn; readonly until: number }>()
    /** Ended turns whose rows go at the time given. */
    const forgetting: Array<{ readonly turnId: string; readonly at: number }> = []
    /** The flush loop's wake-up while it has nothing to write (set while it waits). */
    let wakeFlush: (() => void) | undefined

    const runningOf = (chatId: ChatKey): Running | undefined => {
      for (const running of byChat.get(chatId) ?? []) {
        if (running.live.turnId !== undefined) return running
      }
      return undefined
    }

    const register = (chatId: ChatKey | undefined, providerStreams: boolean, announce?: string) =>
      Effect.gen(function*() {
        const live = yield* makeLiveTurn(chatId, newMessageId(), providerStreams, announce)
        const running: Running = { live, done: yield* Deferred.make<void>() }
        if (chatId !== undefined) {
          const set = byChat.get(chatId) ?? new Set()
          set.add(running)
          byChat.set(chatId, set)
        }
        return running
      })

    const unregister = (running: Running) =>
      Effect.sync(() => {
        const { chatId } = running.live
        close(running.live)
        if (chatId !== undefined) {
          const set = byChat.get(chatId)
          set?.delete(running)
          if (set?.size === 0) byChat.delete(chatId)
          const { turnId } = running.live
          if (!embedded && turnId !== undefined) {
            recent.set(turnId, { live: running.live, until: Date.now() + KEEP_ENDED_MS })
            // The flush loop, waiting with nothing kept, sweeps from now on.
            if (recent.size === 1) wakeFlush?.()
          }
        }
        Deferred.doneUnsafe(running.done, Exit.void)
      })

    const withLive = <A, E>(
      chatId: ChatKey | undefined,
      providerStreams: boolean,
      turn: (live: LiveTurn) => Effect.Effect<A, E>,
      announce?: string
    ) => Effect.acquireUseRelease(register(chatId, providerStreams, announce), (running) => turn(running.live), unregister)

    // -- the log (PostgreSQL only) -----------------------------------------------------------

    /** A follower elsewhere asked for the turn: its events are written from the first, if it is (or just was) this replica's. */
    const writeFor = (turnId: string) => {
      if (logged.has(turnId)) return
      const live = liveOf(turnId) ?? recent.get(turnId)?.live
      if (live === undefined) return
      logged.add(turnId)
      unwritten.set(live, 0)
      wakeFlush?.()
    }

    /**
     * Until a follower elsewhere asks for a turn, or something kept is due to go: an ended turn
     * kept for late followers (swept once a second) or a written turn's rows (deleted at their
     * time). An idle replica does not tick every 40 ms.
     */
    const asked = Effect.callback<void>((resume) => {
      // A follower may have asked in between (the fiber can yield after checking): then at once.
      if (unwritten.size > 0) return resume(Effect.void)
      const wake = () => {
        clearTimeout(timer)
        wakeFlush = undefined
        resume(Effect.void)
      }
      // `forgetting` is in end order, each kept as long: its first is the next due.
      const forgetIn = forgetting.length > 0 ? Math.max(0, forgetting[0]!.at - Date.now()) : Number.POSITIVE_INFINITY
      const wait = Math.min(forgetIn, recent.size > 0 ? SWEEP_ENDED_EVERY_MS : Number.POSITIVE_INFINITY)
      const timer = Number.isFinite(wait) ? setTimeout(wake, wait) : undefined
      wakeFlush = wake
      return Effect.sync(() => {
        clearTimeout(timer)
        wakeFlush = undefined
      })
    })

    const flush = Effect.suspend(() => {
      const rows: Array<LogRow> = []
      const now = Date.now()
      // Kept in the order they ended, each for the same while: the first still kept ends the sweep
      // (every 40 ms, it would otherwise walk every turn of the last 10 s).
      for (const [turnId, { until }] of recent) {
        if (until > now) break
        recent.delete(turnId)
      }
      /** What each turn will have written once the rows are in: counted only then (a failed write is made again). */
      const reached: Array<readonly [LiveTurn, number, boolean]> = []
      for (const [live, count] of unwritten) {
        if (live.turnId === undefined || live.chatId === undefined) {
          // Never accepted (a 409, another agent's chat): nothing to write.
          if (live.ended) unwritten.delete(live)
          continue
        }
        if (live.ended && !recent.has(live.turnId) && liveOf(live.turnId) === undefined) {
          // Ended longer ago than followers are waited for, and still not written (the database
          // refusing): given up, its followers told it ended without finishing (`followLog`).
          unwritten.delete(live)
          continue
        }
        for (let seq = count; seq < live.events.length; seq++) {
          rows.push({ turnId: live.turnId, seq, chatId: live.chatId, event: followerEvent(live, seq) })
        }
        reached.push([live, live.events.length, live.ended])
      }
      let due = 0
      while (due < forgetting.length && forgetting[due]!.at <= now) due++
      const forget = forgetting.splice(0, due).map((f) => f.turnId)
      for (const turnId of forget) logged.delete(turnId)
      const written = Effect.sync(() => {
        for (const [live, count, ended] of reached) {
          if (!unwritten.has(live)) continue
          unwritten.set(live, count)
          if (ended) {
            unwritten.delete(live)
            forgetting.push({ turnId: live.turnId!, at: Date.now() + KEEP_ENDED_MS })
          }
        }
      })
      return Effect.all([
        rows.length > 0 ? log.write(rows).pipe(Effect.andThen(written)) : written,
        forget.length > 0 ? log.forget(forget) : Effect.void
      ], { discard: true })
    })

    const liveOf = (turnId: string): LiveTurn | undefined => {
      for (const set of byChat.values()) {
        for (const running of set) {
          if (running.live.turnId === turnId) return running.live
        }
      }
      return undefined
    }

    const stopLocal = (turnId: string) => {
      const live = liveOf(turnId)
      if (live !== undefined) stopTurn(live)
    }

    const announceLocal = (payload: string) => {
      const asked = decodeAnnouncement(payload)
      const live = asked === undefined ? undefined : liveOf(asked.turnId)
      if (live !== undefined) for (const chunk of asked!.chunks) publish(live, chunk)
    }

    if (!embedded) {
      const pg = yield* PgClient.PgClient
      const flushed = flush.pipe(
        Effect.tapCause((cause) => Effect.logWarning("turn streams: writing the chunk log failed", cause)),
        Effect.ignore
      )
      yield* Effect.gen(function*() {
        while (true) {
          if (unwritten.size === 0) yield* asked
          yield* flushed
          yield* Effect.sleep(FLUSH_EVERY)
        }
      }).pipe(Effect.forkScoped)
      yield* log.sweep.pipe(Effect.ignore, Effect.repeat(Schedule.spaced("1 minute")), Effect.forkScoped)
      yield* Effect.gen(function*() {
        const notifications = yield* pg.listen(turnsChannel)
        // Whatever was written while not listening: followers look again.
        followers.wake("*")
        while (true) {
          const { payload } = yield* Queue.take(notifications)
          if (payload.startsWith("written:")) followers.wake(payload.slice("written:".length))
          else if (payload.startsWith("follow:")) writeFor(payload.slice("follow:".length))
          else if (payload.startsWith("stop:")) stopLocal(payload.slice("stop:".length))
          else if (payload.startsWith("announce:")) announceLocal(payload.slice("announce:".length))
        }
      }).pipe(
        Effect.scoped,
        Effect.tapCause((cause) => Effect.logWarning("turn streams: notification listener lost, reconnecting", cause)),
        Effect.retry(Schedule.spaced("1 second")),
        Effect.forkScoped
      )
    }

    return TurnStreams.of({
      run: withLive,
      start: <A, E>(chatId: ChatKey | undefined, turn: (live: LiveTurn) => Effect.Effect<A, E>, announce?: string) =>
        Effect.gen(function*() {
          // Completed by whichever comes first: the provider's first output (the stream to read), or
          // the turn's end — its failure before any output is the caller's JSON error.
          const ready = yield* Deferred.make<LiveTurn, E>()
          let started: LiveTurn | undefined
          yield* withLive(chatId, true, (l) => {
            started = l
            l.onStarted = () => Deferred.doneUnsafe(ready, Exit.succeed(l))
            return turn(l).pipe(
              // After the 200 a failure is the stream's `error` chunk; logged here as the JSON answer's would be.
              // (Before it, the caller answers the JSON error, logged there.)
              Effect.tapError((e) => e instanceof ProviderError && l.started ? Effect.ignore(toWireError(e)) : Effect.void)
            )
          }, announce).pipe(
            Effect.exit,
            Effect.flatMap((exit) =>
              Effect.sync(() => {
                if (Exit.isFailure(exit)) Deferred.doneUnsafe(ready, Exit.failCause(exit.cause))
                else if (started !== undefined) Deferred.doneUnsafe(ready, Exit.succeed(started))
              })
            ),
            Effect.forkIn(scope, { startImmediately: true })
          )
          return yield* Deferred.await(ready)
        }),
      follow: (chatId) =>
        Effect.gen(function*() {
          const local = runningOf(chatId)
          if (local !== undefined) return eventsReadable(local.live, true)
          if (embedded) return undefined
          const turnId = yield* log.markerOf(chatId)
          return turnId === undefined ? undefined : followers.follow(chatId, turnId)
        }),
      announce: (chatId, chunks) =>
        Effect.gen(function*() {
          const local = runningOf(chatId)
          if (local !== undefined) {
            for (const chunk of chunks) publish(local.live, chunk)
            return
          }
          if (embedded) return
          const turnId = yield* log.markerOf(chatId)
          if (turnId === undefined) return
          const payload = JSON.stringify({ turnId, chunks })
          // A notification's payload is bounded (8000 bytes): a larger announcement is not sent.
          if (Buffer.byteLength(payload) <= MAX_ANNOUNCEMENT_BYTES) yield* log.askAnnounce(payload)
        }).pipe(Effect.ignore),
      stop: (chatId) =>
        Effect.gen(function*() {
          const local = runningOf(chatId)
          if (local !== undefined) {
            stopTurn(local.live)
            yield* Deferred.await(local.done).pipe(Effect.timeoutOption(STOP_WAIT))
            return true
          }
          if (embedded) return false
          const turnId = yield* log.markerOf(chatId)
          if (turnId === undefined) return false
          yield* log.askStop(turnId).pipe(Effect.orDie)
          // Asked again every half second while the marker is held: a notification sent while the
          // running replica's listener reconnects is lost. Bounded: a replica that died holding the
          // turn leaves the marker to expire on its own.
          let checks = 0
          const held = Effect.suspend(() => ++checks % STOP_ASK_EVERY === 0 ? log.askStop(turnId).pipe(Effect.ignore) : Effect.void).pipe(
            Effect.andThen(log.markerOf(chatId))
          )
          yield* held.pipe(
            Effect.repeat({ until: (marker) => marker !== turnId, schedule: Schedule.spaced(STOP_CHECK) }),
            Effect.timeoutOption(STOP_WAIT)
          )
          return true
        })
    })
  }))
}
