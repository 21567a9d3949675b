/**
 * The SQL pieces every statement that writes a chat is built from, so that
 * the marker's rule and the append's rule are written once: the in-flight
 * marker taken unless a live one holds the chat, and messages appended in the
 * client's order, an id the chat already has left as it was. Fragments, to
 * put inside a statement (a CTE body, mostly). Other features read the marker
 * through `turnInFlight`, and never write it.
 */
import { ChatMessage } from "@switchboard/domain"
import { Effect, Schema } from "effect"
import type { SqlClient, Statement } from "effect/sql"
import { SqlSchema } from "effect/sql"
import type { ChatKey } from "../users/ChatKey.ts"
import { userOf } from "../users/ChatKey.ts"

type Sql = SqlClient.SqlClient

/**
 * Takes the chat's marker for `ttlMs` unless a live one exists; `RETURNING turn_id` when taken.
 * `when`: a condition on the statement's other parts (e.g. that the chat is live), else nothing is taken.
 */
export const takeMarker = (sql: Sql, chatId: string, turnId: string, ttlMs: number, when?: Statement.Fragment) =>
  sql`INSERT INTO chat_turns (chat_id, turn_id, expires_at)
    SELECT ${chatId}, ${turnId}, now() + ${ttlMs} * interval '1 millisecond'
    ${when === undefined ? sql`` : sql`WHERE ${when}`}
    ON CONFLICT (chat_id) DO UPDATE
      SET turn_id = EXCLUDED.turn_id, started_at = now(), expires_at = EXCLUDED.expires_at
      WHERE chat_turns.expires_at < now()
    RETURNING turn_id`

/**
 * The chat's activity (what its user's list is ordered by) set to now, when `when` (the marker taken:
 * only the turn holding the chat writes it, so two turns never wait on each other's row).
 */
export const touchChat = (sql: Sql, chatId: ChatKey, when: Statement.Fragment) =>
  sql`INSERT INTO chat_activity (chat_id, user_id)
    SELECT ${chatId}, ${userOf(chatId)} WHERE ${when}
    ON CONFLICT (chat_id) DO UPDATE SET updated_at = EXCLUDED.updated_at`

/**
 * Whether a live turn holds the chat whose id is `chatId` (a column of the caller's statement, such
 * as `j.chat_id`): what a feature that must not run beside a turn (a job's wake) asks.
 */
export const turnInFlight = (sql: Sql, chatId: Statement.Fragment) =>
  sql`EXISTS (SELECT 1 FROM chat_turns t WHERE t.chat_id = ${chatId} AND t.expires_at >= now())`

/**
 * What a feature's statement may read of a chat whose id is `chatId` (a column of the caller's
 * statement, such as `j.chat_id`): its life (`generation`, see `liveChat`) and its agent. A job's
 * wake claim reads them with the job, so that the wake turn writes only to that chat, as its agent.
 */
export const chatGeneration = (sql: Sql, chatId: Statement.Fragment) => sql`(SELECT generation FROM chats WHERE id = ${chatId})`
export const chatAgent = (sql: Sql, chatId: Statement.Fragment) => sql`(SELECT agent FROM chats WHERE id = ${chatId})`

/**
 * Every chat's stored messages as rows (`chat_id`, `message`, `seq`: the order), for a statement
 * that reads a transcript beside other rows (a wake's claim joins them on `chat_id`).
 */
export const transcriptRows = (sql: Sql) => sql`(SELECT chat_id, message, seq FROM chat_messages)`

/**
 * The stored messages that ask for approvals (`metadata.approvals`, docs/tools.md), as rows
 * (`chat_id`, `message`): through the partial index that holds only them, for the approvals
 * feature's lookups and the pending gauge.
 */
export const approvalAsks = (sql: Sql) =>
  sql`(SELECT chat_id, message FROM chat_messages WHERE (message->'metadata') ? 'approvals')`

/**
 * The chat's row, locked against its deletion until the transaction ends (`FOR KEY SHARE`: it
 * blocks nothing else); no row when the operator deleted it. A turn's writes are conditioned on it,
 * so a turn that outlived its chat stores nothing rather than bring the chat back. With
 * `generation` (captured when the turn was accepted), only that life of the chat: a chat deleted
 * and created again under the same id by a newer turn is not the old turn's to write into.
 */
export const liveChat = (sql: Sql, chatId: string, generation?: string) =>
  sql`SELECT 1 FROM chats WHERE id = ${chatId}${
    generation === undefined ? sql`` : sql` AND generation = ${generation}::uuid`
  } FOR KEY SHARE`

/**
 * Appends one batch (a JSON array, see `inBatches`); WITH ORDINALITY keeps the client's order in
 * `seq`. `when`: a condition on the statement's other parts (e.g. that the marker was taken).
 */
export const insertMessages = (sql: Sql, chatId: string, batch: string, when?: Statement.Fragment) =>
  sql`INSERT INTO chat_messages (chat_id, id, role, message, bytes)
    SELECT ${chatId}, t.m->>'id', t.m->>'role', t.m, octet_length(t.m::text)
    FROM jsonb_array_elements(${batch}::jsonb) WITH ORDINALITY AS t(m, n)
    ${when === undefined ? sql`` : sql`WHERE ${when}`}
    ORDER BY t.n
    ON CONFLICT (chat_id, id) DO NOTHING`

/**
 * What the chat's stored transcript holds, as one row (`n` messages, `bytes` of their JSON): what
 * its limit (`CHAT_TRANSCRIPT_MAX_MESSAGES`, `…_BYTES`) is checked against. A message stored
 * before sizes were kept is measured here.
 */
export const transcriptSize = (sql: Sql, chatId: string) =>
  sql`SELECT count(*)::int8 AS n, coalesce(sum(coalesce(bytes, octet_length(message::text))), 0)::int8 AS bytes
    FROM chat_messages WHERE chat_id = ${chatId}`

/** Bounds of one INSERT statement of messages. */
export const APPEND_BATCH = { messages: 100, bytes: 256 * 1024 }

/**
 * The messages as JSON arrays of at most {@link APPEND_BATCH} each. The embedded
 * database runs one statement at a time: one multi-megabyte statement would
 * stall every other request's statements (health probes included) until it
 * finished, while small statements let theirs run in between.
 */
export const inBatches = (messages: ReadonlyArray<ChatMessage>): Array<string> => {
  const batches: Array<string> = []
  let current: Array<string> = []
  let bytes = 0
  for (const message of messages) {
    const json = JSON.stringify(message)
    if (current.length > 0 && (current.length >= APPEND_BATCH.messages || bytes + json.length > APPEND_BATCH.bytes)) {
      batches.push(`[${current.join(",")}]`)
      current = []
      bytes = 0
    }
    current.push(json)
    bytes += json.length
  }
  if (current.length > 0) batches.push(`[${current.join(",")}]`)
  return batches
}

/**
 * One batch appended to a chat that exists (that `generation` of it, when given); false when it
 * does not (the turn that appends created it: a deleted chat is not brought back). Batches run one
 * after the other, so the order holds across them. The chat row is only share-locked, never
 * rewritten: a new row version written inside a turn's transaction made every other statement's
 * `INSERT INTO chats … ON CONFLICT` wait for that transaction — and the marker upsert, which by
 * then held the marker row the transaction was about to release, deadlocked with it.
 */
export const appendTo = (sql: Sql, chatId: ChatKey, batch: string, generation: string | undefined) =>
  sql<{ live: boolean }>`
    WITH live AS (${liveChat(sql, chatId, generation)}),
    appended AS (
      ${insertMessages(sql, chatId, batch, sql`EXISTS (SELECT 1 FROM live)`)}
    )
    SELECT EXISTS (SELECT 1 FROM live) AS live`.pipe(Effect.map((rows) => rows[0]?.live === true))

/** The chat's stored transcript, in order. */
export const findTranscript = (sql: Sql) =>
  SqlSchema.findAll({
    Request: Schema.String,
    Result: Schema.Struct({ message: ChatMessage }),
    execute: (chatId) => sql`SELECT message FROM chat_messages WHERE chat_id = ${chatId} ORDER BY seq`
  })
