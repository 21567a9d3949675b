/**
 * The running turns' chunks in PostgreSQL (docs/streaming.md): what lets a
 * client resume or follow a turn on a replica other than the one running it.
 *
 * A follower on another replica asks for the turn (`follow:<turnId>`); from
 * then on the running replica writes that turn's new events — the first time
 * all of them — with every other followed turn's in one statement per
 * `FLUSH_EVERY`, which also `pg_notify`s the turns written; the follower reads
 * the turn's events past its position and waits for the next notification.
 * A turn nobody follows from elsewhere is never written. A
 * turn's rows are deleted `KEEP_ENDED` after it ended (a follower a little
 * behind still reads the end); rows a crashed replica left are swept.
 *
 * The channel also carries stops: a replica asked to stop a turn it does not
 * run notifies `stop:<turnId>`, and the replica running it stops it.
 */
import type { SqlClient } from "effect/sql"
import { Effect, Schema } from "effect"
import { SqlSchema } from "effect/sql"
import type { ChatKey } from "../../users/ChatKey.ts"

export const turnsChannel = "switchboard_turns"

/** How often the running replica writes new events: the lag a follower on another replica sees. */
export const FLUSH_EVERY = "40 millis"
/** How long an ended turn's events stay readable. */
export const KEEP_ENDED_MS = 10_000
/** Rows older than this whose turn holds no live marker are a crashed replica's: swept. */
export const ABANDONED_AFTER = "15 minutes"

/** A notification's payload holds at most 8000 bytes: beyond this many turn ids, followers all look. */
const MAX_IDS_PER_NOTIFY = 150

export interface LogRow {
  readonly turnId: string
  readonly seq: number
  readonly chatId: string
  readonly event: string
}

export const written = (ids: ReadonlyArray<string>) => `written:${ids.length > MAX_IDS_PER_NOTIFY ? "*" : ids.join(",")}`

export const makeTurnLog = (sql: SqlClient.SqlClient) => {
  const markerRow = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: Schema.Struct({ turn_id: Schema.String }),
    execute: (chatId) => sql`SELECT turn_id FROM chat_turns WHERE chat_id = ${chatId} AND expires_at > now()`
  })
  const eventsAfter = SqlSchema.findAll({
    Request: Schema.Struct({ turnId: Schema.String, after: Schema.Number }),
    Result: Schema.Struct({ seq: Schema.Number, event: Schema.String }),
    execute: ({ after, turnId }) =>
      sql`SELECT seq, event FROM turn_chunks WHERE turn_id = ${turnId} AND seq > ${after} ORDER BY seq LIMIT 500`
  })
  return {
    /** The turn holding the chat's marker, if one does. */
    markerOf: (chatId: ChatKey) =>
      markerRow(chatId).pipe(
        Effect.map((row) => row._tag === "Some" ? row.value.turn_id : undefined),
        Effect.orDie
      ),
    /** Writes the rows and notifies every replica of the turns written, in one statement. */
    write: (rows: ReadonlyArray<LogRow>) => {
      const ids = [...new Set(rows.map((r) => r.turnId))]
      return sql`WITH written AS (
        INSERT INTO turn_chunks (turn_id, seq, chat_id, event)
        SELECT r.turn_id, r.seq, r.chat_id, r.event
        FROM jsonb_to_recordset(${JSON.stringify(rows.map((r) => ({ turn_id: r.turnId, seq: r.seq, chat_id: r.chatId, event: r.event })))}::jsonb)
          AS r (turn_id text, seq integer, chat_id text, event text)
        ON CONFLICT DO NOTHING
        RETURNING 1
      )
      SELECT pg_notify(${turnsChannel}, ${written(ids)}), (SELECT count(*) FROM written) AS n`.pipe(Effect.asVoid)
    },
    eventsAfter: (turnId: string, after: number) => eventsAfter({ turnId, after }).pipe(Effect.orDie),
    forget: (turnIds: ReadonlyArray<string>) =>
      sql`DELETE FROM turn_chunks WHERE turn_id IN (SELECT jsonb_array_elements_text(${JSON.stringify(turnIds)}::jsonb))`.pipe(
        Effect.asVoid
      ),
    // A dead replica's marker row stays, expired, until the chat's next turn replaces it: only a
    // live marker keeps its turn's rows.
    sweep: sql`DELETE FROM turn_chunks WHERE written_at < now() - ${ABANDONED_AFTER}::interval
      AND turn_id NOT IN (SELECT turn_id FROM chat_turns WHERE expires_at > now())`.pipe(Effect.asVoid),
    askStop: (turnId: string) => sql`SELECT pg_notify(${turnsChannel}, ${`stop:${turnId}`})`.pipe(Effect.asVoid),
    /** Asks the replica running the turn to write its events (from the first): a follower is waiting for them. */
    askFollow: (turnId: string) => sql`SELECT pg_notify(${turnsChannel}, ${`follow:${turnId}`})`.pipe(Effect.asVoid),
    /** Asks the replica running the turn to send these chunks on its stream (`TurnStreams.announce`). */
    askAnnounce: (payload: string) => sql`SELECT pg_notify(${turnsChannel}, ${`announce:${payload}`})`.pipe(Effect.asVoid)
  }
}

export type TurnLog = ReturnType<typeof makeTurnLog>
