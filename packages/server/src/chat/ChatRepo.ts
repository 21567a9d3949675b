/**
 * Chat transcripts and the per-chat in-flight marker, in SQL.
 *
 * The marker is what makes "one turn at a time per chat" hold across server
 * replicas: it is taken by a single atomic upsert that only succeeds when no
 * live marker exists, and it carries an expiry so that a replica that dies
 * mid-turn cannot wedge the chat. No transaction or lock is held while the
 * provider is called. Only this module writes it: the server tools' writes
 * (ServerTools.ts) ride in its statements as fragments.
 */
import { ChatMessage, ChatNotFound, chatTitle } from "@switchboard/domain"
import type { ChatSummary } from "@switchboard/domain"
import { Context, Duration, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { retryDeadlock } from "../db/RetryDeadlock.ts"
import { traced } from "@switchboard/providers"
import type { Statement } from "effect/sql"
import type { ToolWrites, WrittenRow } from "./ServerTools.ts"
import type { ChatKey } from "./ChatKey.ts"
import { chatIdOf, chatKey } from "./ChatKey.ts"
import { insertMessages, liveChat, takeMarker, touchChat } from "./TranscriptSql.ts"

/** Bounds of one INSERT statement of messages. */
export const APPEND_BATCH = { messages: 100, bytes: 256 * 1024 }

/**
 * The messages as JSON arrays of at most {@link APPEND_BATCH} each. The embedded
 * database runs in this process's thread: one multi-megabyte statement would
 * stall every other request (health probes included) until it finished, while
 * small statements let the event loop serve them in between.
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

/** Enough of a first message to make its title from (whitespace runs shrink). */
const TITLE_SOURCE_CHARS = 400

/** A list page's cursor: the last chat's activity (epoch ms) and id, opaque to clients. */
const writeCursor = (ms: number, chatId: string) => Buffer.from(`${ms}:${chatId}`, "utf8").toString("base64url")
const readCursor = (cursor: string): { readonly ms: number; readonly chatId: string } | undefined => {
  const [ms, chatId] = Buffer.from(cursor, "base64url").toString("utf8").split(/:(.*)/su)
  return ms !== undefined && /^\d{1,15}$/.test(ms) && chatId !== undefined && chatId !== "" ? { ms: Number(ms), chatId } : undefined
}

/** What a turn's opening statement found (`beginAgentTurn`). */
export type OpenedTurn =
  | { readonly _tag: "Taken"; readonly transcript: ReadonlyArray<ChatMessage>; readonly generation: string }
  /** Another live turn holds the chat. */
  | { readonly _tag: "Held" }
  /** The chat is another agent's (`agent`): nothing taken, nothing stored. */
  | { readonly _tag: "OtherAgent"; readonly agent: string }

export class ChatRepo extends Context.Service<ChatRepo, {
  /**
   * Takes the chat's in-flight marker for `ttl`; false when another live turn
   * holds it. With `messages`, they are appended, only when the marker was
   * taken: the first batch in the same statement (a write-ahead turn's first
   * round trip), any further ones ({@link inBatches}) right after.
   */
  beginTurn(chatId: ChatKey, turnId: string, ttl: Duration.Input, messages?: ReadonlyArray<ChatMessage>): Effect.Effect<boolean>
  /**
   * `beginTurn`, and the transcript, read by the same statement: `undefined` when another live
   * turn holds the chat. A turn's opening round trip. `generation`: the life of the chat the turn
   * was accepted in, to condition its later writes on (see `liveChat`). The transcript may or may not include
   * `messages` (ids already stored are left as they were): the caller adds those it lacks.
   *
   * A statement reads from the snapshot it started with. When a marker row existed at that
   * moment, the turn that held it may have released it — and stored its answer — while this
   * statement waited for its row: the transcript is then read again, under the marker, by a
   * second statement. Without one, the chat was idle when the statement began, so nothing was
   * stored after its snapshot.
   */
  beginTurnReading(
    chatId: ChatKey,
    turnId: string,
    ttl: Duration.Input,
    messages?: ReadonlyArray<ChatMessage>
  ): Effect.Effect<{ readonly transcript: ReadonlyArray<ChatMessage>; readonly generation: string } | undefined>
  /**
   * `beginTurnReading` for a turn of `agent`: a new chat is created as that agent's, and an existing
   * one is opened only if it is that agent's — else nothing is taken or stored and the chat's agent
   * is answered (`OtherAgent`), in the same one statement, so a turn that assumed the right agent
   * (almost all) costs nothing more.
   */
  beginAgentTurn(
    chatId: ChatKey,
    turnId: string,
    ttl: Duration.Input,
    messages: ReadonlyArray<ChatMessage>,
    agent: string
  ): Effect.Effect<OpenedTurn>
  /**
   * Takes the marker, as `beginTurn`, for a turn whose caller read the transcript just before:
   * `messages` are appended only if the chat still has exactly `known` messages (messages are
   * never removed, so the count says whether anything was stored since) and no marker row existed
   * when the statement began (its holder may have stored its answer after this statement's
   * snapshot, while the statement waited for the row: see `beginTurnReading`). True: taken,
   * nothing new, appended; false: taken, perhaps something new, nothing appended; `undefined`:
   * another live turn holds the chat; "gone": the chat (that `generation` of it, when given) no
   * longer exists, nothing taken or stored.
   */
  beginTurnUnchanged(
    chatId: ChatKey,
    turnId: string,
    ttl: Duration.Input,
    known: number,
    messages: ReadonlyArray<ChatMessage>,
    generation?: string
  ): Effect.Effect<boolean | "gone" | undefined>
  /**
   * Releases the marker, only if this turn still holds it. With `messages`,
   * they are appended in the same statement (the turn's answer and its end:
   * one round trip). False when the chat was deleted (nothing stored). With `generation`, only that
   * life of the chat counts as existing (see `liveChat`); likewise for `append` and `holdChat`.
   */
  endTurn(chatId: ChatKey, turnId: string, messages?: ReadonlyArray<ChatMessage>, generation?: string): Effect.Effect<boolean>
  /** Extends this turn's marker by `ttl` from now (a turn of several provider calls); false if it lost it. */
  renewTurn(chatId: ChatKey, turnId: string, ttl: Duration.Input): Effect.Effect<boolean>
  /**
   * A turn's round that executed server tool calls, in one statement: `batch` (the assistant
   * message and the calls' results, one `inBatches` batch) appended, the tools' `writes`, the
   * marker extended by `ttl` for the next provider call. `undefined` when the turn no longer holds
   * the marker (nothing is written then); else the row for `writes.after`.
   */
  toolRound(
    chatId: ChatKey,
    turnId: string,
    ttl: Duration.Input,
    batch: string,
    writes: ToolWrites
  ): Effect.Effect<{ readonly row: WrittenRow } | undefined>
  /**
   * A turn of the chat ended: its marker released (if `turnId` still holds it) and the server
   * tools' `writes` of a turn's end (`ServerTools.turnEnded`), in one statement. With `batch` (the
   * turn's answer, one `inBatches` batch) it is appended by the same statement: a turn's answer and
   * its end in one round trip. `chatGone`: the chat (that `generation` of it, when given: see
   * `liveChat`) was deleted meanwhile, so `batch` was not stored (nor the chat brought back, nor a
   * newer chat of the same id written into). `row`: for `writes.after`.
   */
  turnEnded(
    chatId: ChatKey,
    turnId: string,
    writes: ToolWrites,
    batch?: string,
    generation?: string
  ): Effect.Effect<{ readonly chatGone: boolean; readonly row: WrittenRow | undefined }>
  /**
   * The server tools' `writes` as a statement of their own, in the caller's transaction (a round too
   * large for one statement); no statement when they write nothing. The row is for `writes.after`,
   * once the transaction committed.
   */
  writeTools(writes: ToolWrites): Effect.Effect<WrittenRow>
  /**
   * Appends messages in order to an existing chat; a message whose id the chat already has is left
   * as it was. Large appends go in several statements ({@link inBatches}), each atomic: one cut
   * short leaves a prefix stored, which a re-sent history completes in order. False when the chat
   * does not exist (deleted by the operator): nothing is stored, the chat is not created.
   */
  append(chatId: ChatKey, messages: ReadonlyArray<ChatMessage>, generation?: string): Effect.Effect<boolean>
  /**
   * In a transaction: locks the chat's row against deletion until it ends; false when the chat
   * does not exist (any more).
   */
  holdChat(chatId: ChatKey, generation?: string): Effect.Effect<boolean>
  transcript(chatId: ChatKey): Effect.Effect<ReadonlyArray<ChatMessage>, ChatNotFound>
  /** The agent the chat keeps; `undefined` when there is no such chat. */
  agentOf(chatId: ChatKey): Effect.Effect<string | undefined>
  /** Which of `ids` the chat's transcript holds (none for a chat that does not exist). */
  storedIds(chatId: ChatKey, ids: ReadonlyArray<string>): Effect.Effect<ReadonlySet<string>>
  /**
   * Deletes the chat: its transcript, its marker and its jobs go with it (foreign keys, ON DELETE
   * CASCADE). False when there was none.
   */
  remove(chatId: ChatKey): Effect.Effect<boolean>
  /**
   * The user's chats, most recently active first: at most `limit`, older than the `before` cursor
   * (a page's `nextBefore`). An unreadable cursor is the first page's.
   */
  list(userId: string, limit: number, before?: string): Effect.Effect<{ readonly chats: ReadonlyArray<ChatSummary>; readonly nextBefore?: string }>
}>()("switchboard/server/chat/ChatRepo") {
  static readonly layer = Layer.effect(ChatRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findMessages = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ message: ChatMessage }),
      execute: (chatId) => sql`SELECT message FROM chat_messages WHERE chat_id = ${chatId} ORDER BY seq`
    })
    const chatExists = (chatId: ChatKey) =>
      sql<{ n: number }>`SELECT count(*)::int AS n FROM chats WHERE id = ${chatId}`.pipe(
        Effect.map((rows) => (rows[0]?.n ?? 0) > 0)
      )

    // One statement per batch; WITH ORDINALITY keeps the client's order in `seq`, and batches
    // run one after the other, so the order holds across them. The chat must exist (the turn that
    // appends created it): a deleted chat is not brought back. The chat row is only share-locked,
    // never rewritten: a new row version written inside a turn's transaction made every other
    // statement's `INSERT INTO chats … ON CONFLICT` wait for that transaction — and the marker
    // upsert, which by then held the marker row the transaction was about to release, deadlocked
    // with it.
    const appendBatch = (chatId: ChatKey, batch: string, generation: string | undefined) =>
      sql<{ live: boolean }>`
        WITH live AS (${liveChat(sql, chatId, generation)}),
        appended AS (
          ${insertMessages(sql, chatId, batch, sql`EXISTS (SELECT 1 FROM live)`)}
        )
        SELECT EXISTS (SELECT 1 FROM live) AS live`.pipe(Effect.map((rows) => rows[0]?.live === true))

    const decodeTranscript = Schema.decodeUnknownEffect(Schema.Array(ChatMessage))

    /** The tools' fragments after chat's own in a list (`WITH` entries, returned columns). */
    const andAlso = (fragments: ReadonlyArray<Statement.Fragment>) =>
      fragments.length === 0 ? sql`` : sql`, ${sql.csv(fragments)}`

    const openOnce = Effect.fnUntraced(function*(
      chatId: ChatKey,
      turnId: string,
      ttl: Duration.Input,
      messages: ReadonlyArray<ChatMessage>,
      agent: string | undefined
    ) {
      const [first, ...rest] = inBatches(messages)
      const ttlMs = Duration.toMillis(Duration.fromInputUnsafe(ttl))
      // With an agent: the marker only on a chat this statement creates (as that agent's) or one the
      // snapshot shows as that agent's. A chat created by another statement after this one's snapshot
      // is neither: nothing is taken, and the caller opens again (the next snapshot sees it).
      const created = agent === undefined
        ? sql`INSERT INTO chats (id) VALUES (${chatId}) ON CONFLICT (id) DO NOTHING RETURNING generation`
        : sql`INSERT INTO chats (id, agent) VALUES (${chatId}, ${agent}) ON CONFLICT (id) DO NOTHING RETURNING generation`
      const agentHolds = agent === undefined
        ? undefined
        : sql`(EXISTS (SELECT 1 FROM chat) OR EXISTS (SELECT 1 FROM chats WHERE id = ${chatId} AND agent = ${agent}))`
      // The statement's snapshot predates its own inserts, so the rows read are the transcript
      // before this turn; one row with a null message stands for "nothing stored yet" (and, when
      // the marker was not taken, is the only row: it says whose chat it is). The generation is the
      // new row's, or the one the snapshot saw.
      const rows = yield* retryDeadlock(sql<{
        message: unknown
        held: boolean
        taken: boolean
        agent: string | null
        generation: string | null
      }>`
        WITH chat AS (${created}),
        seen AS (SELECT EXISTS (SELECT 1 FROM chat_turns WHERE chat_id = ${chatId}) AS held),
        marker AS (
          ${takeMarker(sql, chatId, turnId, ttlMs, agentHolds)}
        ),
        appended AS (
          ${insertMessages(sql, chatId, first ?? "[]", sql`EXISTS (SELECT 1 FROM marker)`)}
        ),
        touched AS (${touchChat(sql, chatId, sql`EXISTS (SELECT 1 FROM marker)`)})
        SELECT m.message, (SELECT held FROM seen) AS held, EXISTS (SELECT 1 FROM marker) AS taken,
          (SELECT agent FROM chats WHERE id = ${chatId}) AS agent,
          coalesce((SELECT generation FROM chat), (SELECT generation FROM chats WHERE id = ${chatId}))::text AS generation
        FROM (SELECT 1) AS one LEFT JOIN chat_messages m ON EXISTS (SELECT 1 FROM marker) AND m.chat_id = ${chatId}
        ORDER BY m.seq`)
      const head = rows[0]!
      if (!head.taken) {
        if (agent === undefined) return { _tag: "Held" } as const
        if (head.agent !== null && head.agent !== agent) return { _tag: "OtherAgent", agent: head.agent } as const
        return head.generation === null ? undefined : { _tag: "Held" } as const
      }
      // Neither: another statement created the chat after this one's snapshot (both new, at once).
      // Rare, so read apart; the marker taken holds the chat's row.
      const generation = head.generation ??
        (yield* sql<{ generation: string }>`SELECT generation::text AS generation FROM chats WHERE id = ${chatId}`)[0]?.generation
      if (generation === undefined) return yield* Effect.die(new Error(`chat ${chatId}: marker taken but no chat row`))
      for (const batch of rest) yield* appendBatch(chatId, batch, generation)
      const transcript = head.held
        ? (yield* findMessages(chatId)).map((r) => r.message)
        : yield* decodeTranscript(rows.flatMap((r) => r.message === null ? [] : [r.message]))
      return { _tag: "Taken", transcript, generation } as const
    })

    /** A turn's opening; once more when a concurrent first turn created the chat unseen (see `openOnce`). */
    const openTurn = (
      chatId: ChatKey,
      turnId: string,
      ttl: Duration.Input,
      messages: ReadonlyArray<ChatMessage>,
      agent: string | undefined
    ): Effect.Effect<OpenedTurn> =>
      openOnce(chatId, turnId, ttl, messages, agent).pipe(
        Effect.flatMap((opened) =>
          opened !== undefined
            ? Effect.succeed(opened)
            : openOnce(chatId, turnId, ttl, messages, agent).pipe(Effect.map((again) => again ?? { _tag: "Held" } as const))
        ),
        Effect.orDie,
        traced("ChatRepo.beginTurnReading")
      )

    return ChatRepo.of({
      beginTurnReading: (chatId, turnId, ttl, messages = []) =>
        openTurn(chatId, turnId, ttl, messages, undefined).pipe(
          Effect.map((opened) => opened._tag === "Taken" ? { transcript: opened.transcript, generation: opened.generation } : undefined)
        ),
      beginAgentTurn: (chatId, turnId, ttl, messages, agent) => openTurn(chatId, turnId, ttl, messages, agent),
      beginTurnUnchanged: Effect.fnUntraced(function*(chatId, turnId, ttl, known, messages, generation) {
        const [first, ...rest] = inBatches(messages)
        const ttlMs = Duration.toMillis(Duration.fromInputUnsafe(ttl))
        // The marker only on a live chat: the chat (its row) may have gone since the caller's look
        // (the operator deleted it), and a marker on no chat is a foreign key violation.
        const rows = yield* retryDeadlock(sql<{ n: number | string; live: boolean; taken: boolean }>`
          WITH live AS (${liveChat(sql, chatId, generation)}),
          marker AS (
            ${takeMarker(sql, chatId, turnId, ttlMs, sql`EXISTS (SELECT 1 FROM live)`)}
          ),
          stored AS (
            SELECT CASE WHEN EXISTS (SELECT 1 FROM chat_turns WHERE chat_id = ${chatId}) THEN -1 ELSE count(*) END AS n
            FROM chat_messages WHERE chat_id = ${chatId}
          ),
          appended AS (
            ${insertMessages(sql, chatId, first ?? "[]", sql`EXISTS (SELECT 1 FROM marker) AND (SELECT n FROM stored) = ${known}`)}
          ),
          touched AS (${touchChat(sql, chatId, sql`EXISTS (SELECT 1 FROM marker)`)})
          SELECT (SELECT n FROM stored) AS n, EXISTS (SELECT 1 FROM live) AS live, EXISTS (SELECT 1 FROM marker) AS taken`)
        const row = rows[0]!
        if (!row.live) return "gone" as const
        if (!row.taken) return undefined
        if (Number(row.n) !== known) return false
        for (const batch of rest) yield* appendBatch(chatId, batch, generation)
        return true
      }, Effect.orDie, traced("ChatRepo.beginTurnUnchanged")),
      beginTurn: Effect.fnUntraced(function*(chatId, turnId, ttl, messages = []) {
        const [first, ...rest] = inBatches(messages)
        const ttlMs = Duration.toMillis(Duration.fromInputUnsafe(ttl))
        // One statement (one round trip, atomic): create the chat if new, then take the marker
        // unless a live one exists. Foreign keys are checked at the end of the statement.
        if (first === undefined) {
          const rows = yield* retryDeadlock(sql<{ turn_id: string }>`
            WITH chat AS (INSERT INTO chats (id) VALUES (${chatId}) ON CONFLICT (id) DO NOTHING),
            marker AS (
              ${takeMarker(sql, chatId, turnId, ttlMs)}
            ),
            touched AS (${touchChat(sql, chatId, sql`EXISTS (SELECT 1 FROM marker)`)})
            SELECT turn_id FROM marker`)
          return rows.length === 1
        }
        // The same, and the messages appended only if the marker was taken (`WHERE EXISTS` on its RETURNING).
        const rows = yield* retryDeadlock(sql<{ turn_id: string }>`
          WITH chat AS (INSERT INTO chats (id) VALUES (${chatId}) ON CONFLICT (id) DO NOTHING),
          marker AS (
            ${takeMarker(sql, chatId, turnId, ttlMs)}
          ),
          appended AS (
            ${insertMessages(sql, chatId, first, sql`EXISTS (SELECT 1 FROM marker)`)}
          ),
          touched AS (${touchChat(sql, chatId, sql`EXISTS (SELECT 1 FROM marker)`)})
          SELECT turn_id FROM marker`)
        if (rows.length !== 1) return false
        for (const batch of rest) yield* appendBatch(chatId, batch, undefined)
        return true
      }, Effect.orDie, traced("ChatRepo.beginTurn")),
      endTurn: Effect.fnUntraced(function*(chatId, turnId, messages = [], generation) {
        if (messages.length === 0) {
          yield* sql`DELETE FROM chat_turns WHERE chat_id = ${chatId} AND turn_id = ${turnId}`
          return true
        }
        // Append (to a chat that still exists, as `append`) and release, in one statement.
        const rows = yield* sql<{ live: boolean }>`
          WITH live AS (${liveChat(sql, chatId, generation)}),
          appended AS (
            ${insertMessages(sql, chatId, JSON.stringify(messages), sql`EXISTS (SELECT 1 FROM live)`)}
          ),
          released AS (
            DELETE FROM chat_turns WHERE chat_id = ${chatId} AND turn_id = ${turnId}
          )
          SELECT EXISTS (SELECT 1 FROM live) AS live`
        return rows[0]?.live === true
      }, Effect.orDie, traced("ChatRepo.endTurn")),
      renewTurn: Effect.fnUntraced(function*(chatId, turnId, ttl) {
        const ttlMs = Duration.toMillis(Duration.fromInputUnsafe(ttl))
        const rows = yield* sql`
          UPDATE chat_turns SET expires_at = now() + ${ttlMs} * interval '1 millisecond'
          WHERE chat_id = ${chatId} AND turn_id = ${turnId}
          RETURNING turn_id`
        return rows.length === 1
      }, Effect.orDie, traced("ChatRepo.renewTurn")),
      toolRound: Effect.fnUntraced(function*(chatId, turnId, ttl, batch, writes) {
        const ttlMs = Math.max(0, Math.round(Duration.toMillis(Duration.fromInputUnsafe(ttl))))
        // Everything hangs on the marker's renewal: a turn that lost its chat writes nothing.
        const renewed = sql`EXISTS (SELECT 1 FROM marker)`
        const rows = yield* retryDeadlock(sql<WrittenRow>`
          WITH marker AS (
            UPDATE chat_turns SET expires_at = now() + ${ttlMs} * interval '1 millisecond'
            WHERE chat_id = ${chatId} AND turn_id = ${turnId}
            RETURNING turn_id
          ),
          appended AS (
            ${insertMessages(sql, chatId, batch, renewed)}
          )${andAlso(writes.ctes(renewed))}
          SELECT turn_id${andAlso(writes.columns)} FROM marker`)
        return rows.length === 1 ? { row: rows[0]! } : undefined
      }, Effect.orDie, traced("ChatRepo.toolRound")),
      turnEnded: Effect.fnUntraced(function*(chatId, turnId, writes, batch, generation) {
        // The marker's release (a no-op when the turn's last statement released it already) and the
        // tools' writes, in one statement. The answer goes only to a chat that still exists (the
        // operator may have deleted it during the turn).
        const appended = batch === undefined ? sql`` : sql`
          live AS (${liveChat(sql, chatId, generation)}),
          appended AS (
            ${insertMessages(sql, chatId, batch, sql`EXISTS (SELECT 1 FROM live)`)}
          ),`
        const rows = yield* retryDeadlock(sql<WrittenRow & { live: boolean }>`
          WITH ${appended}
          released AS (
            DELETE FROM chat_turns WHERE chat_id = ${chatId} AND turn_id = ${turnId}
          )${andAlso(writes.ctes(sql`true`))}
          SELECT ${batch === undefined ? sql`true` : sql`EXISTS (SELECT 1 FROM live)`} AS live${andAlso(writes.columns)}`)
        const row = rows[0]
        return { chatGone: row?.live !== true, row }
      }, Effect.orDie, traced("ChatRepo.turnEnded")),
      writeTools: Effect.fnUntraced(function*(writes) {
        const ctes = writes.ctes(sql`true`)
        if (ctes.length === 0 && writes.columns.length === 0) return {}
        const rows = yield* sql<WrittenRow>`
          ${ctes.length === 0 ? sql`` : sql`WITH ${sql.csv(ctes)}`}
          SELECT true AS written${andAlso(writes.columns)}`
        return rows[0] ?? {}
      }, Effect.orDie, traced("ChatRepo.writeTools")),
      append: Effect.fnUntraced(function*(chatId, messages, generation) {
        for (const batch of inBatches(messages)) {
          if (!(yield* appendBatch(chatId, batch, generation))) return false
        }
        return true
      }, Effect.orDie, traced("ChatRepo.append")),
      holdChat: Effect.fnUntraced(function*(chatId, generation) {
        const rows = yield* liveChat(sql, chatId, generation)
        return rows.length > 0
      }, Effect.orDie, traced("ChatRepo.holdChat")),
      remove: Effect.fnUntraced(function*(chatId) {
        // The cascade may meet a turn's statement on the same rows: a deadlock victim is run again.
        const rows = yield* retryDeadlock(sql`DELETE FROM chats WHERE id = ${chatId} RETURNING id`)
        return rows.length > 0
      }, Effect.orDie, traced("ChatRepo.remove")),
      list: Effect.fnUntraced(function*(userId, limit, before) {
        const cursor = before === undefined ? undefined : readCursor(before)
        const rows = yield* sql<{ chat_id: string; agent: string; created_at: Date | string; updated_ms: string | number; first_user: string | null }>`
          SELECT a.chat_id, c.agent, c.created_at, (extract(epoch FROM a.updated_at) * 1000)::bigint AS updated_ms,
            (SELECT left(m.message->>'content', ${TITLE_SOURCE_CHARS}) FROM chat_messages m
              WHERE m.chat_id = a.chat_id AND m.role = 'user' ORDER BY m.seq LIMIT 1) AS first_user
          FROM chat_activity a JOIN chats c ON c.id = a.chat_id
          WHERE a.user_id = ${userId}${cursor === undefined ? sql`` : sql`
            AND (a.updated_at, a.chat_id) < (timestamptz 'epoch' + ${cursor.ms} * interval '1 millisecond', ${chatKey(userId, cursor.chatId)})`}
          ORDER BY a.updated_at DESC, a.chat_id DESC
          LIMIT ${limit + 1}`
        const page = rows.slice(0, limit)
        const last = page[page.length - 1]
        const chats = page.map((row): ChatSummary => ({
          chatId: chatIdOf(row.chat_id as ChatKey),
          agent: row.agent,
          title: chatTitle(row.first_user ?? undefined),
          createdAt: new Date(row.created_at).toISOString(),
          updatedAt: new Date(Number(row.updated_ms)).toISOString()
        }))
        return rows.length > limit && last !== undefined
          ? { chats, nextBefore: writeCursor(Number(last.updated_ms), chatIdOf(last.chat_id as ChatKey)) }
          : { chats }
      }, Effect.orDie, traced("ChatRepo.list")),
      agentOf: (chatId) =>
        sql<{ agent: string }>`SELECT agent FROM chats WHERE id = ${chatId}`.pipe(
          Effect.map((rows) => rows[0]?.agent),
          Effect.orDie,
          traced("ChatRepo.agentOf")
        ),
      storedIds: (chatId, ids) =>
        (ids.length === 0
          ? Effect.succeed(new Set<string>())
          : sql<{ id: string }>`SELECT id FROM chat_messages WHERE chat_id = ${chatId} AND id IN ${sql.in(ids)}`.pipe(
            Effect.map((rows) => new Set(rows.map((r) => r.id))),
            Effect.orDie
          )).pipe(traced("ChatRepo.storedIds")),
      transcript: Effect.fnUntraced(function*(chatId) {
        const rows = yield* findMessages(chatId).pipe(Effect.orDie)
        if (rows.length === 0 && !(yield* chatExists(chatId).pipe(Effect.orDie))) {
          return yield* new ChatNotFound({ error: `No chat with id "${chatIdOf(chatId)}"`, chatId: chatIdOf(chatId) })
        }
        return rows.map((r) => r.message)
      }, traced("ChatRepo.transcript"))
    })
  }))
}
