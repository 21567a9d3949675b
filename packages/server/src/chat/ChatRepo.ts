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
import { ChatMessage, ChatNotFound, chatTitle, traced } from "@switchboard/domain"
import type { ChatSummary } from "@switchboard/domain"
import { Context, Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { retryDeadlock } from "../db/RetryDeadlock.ts"
import type { Statement } from "effect/sql"
import type { ToolWrites, WrittenRow } from "./ServerTools.ts"
import type { ChatKey } from "../users/ChatKey.ts"
import { chatIdOf, chatKey } from "../users/ChatKey.ts"
import { appendTo, findTranscript, inBatches, insertMessages, liveChat } from "./TranscriptSql.ts"
import type { TurnOpenings } from "./turn/TurnOpenings.ts"
import { transcriptLimit } from "./ChatSettings.ts"
import { makeTurnOpenings } from "./turn/TurnOpenings.ts"

export { APPEND_BATCH, inBatches } from "./TranscriptSql.ts"
export type { OpenedTurn } from "./turn/TurnOpenings.ts"

/** Enough of a first message to make its title from (whitespace runs shrink). */
const TITLE_SOURCE_CHARS = 400

/** A list page's cursor: the last chat's activity (epoch ms) and id, opaque to clients. */
const writeCursor = (ms: number, chatId: string) => Buffer.from(`${ms}:${chatId}`, "utf8").toString("base64url")
const readCursor = (cursor: string): { readonly ms: number; readonly chatId: string } | undefined => {
  const [ms, chatId] = Buffer.from(cursor, "base64url").toString("utf8").split(/:(.*)/su)
  return ms !== undefined && /^\d{1,15}$/.test(ms) && chatId !== undefined && chatId !== "" ? { ms: Number(ms), chatId } : undefined
}

export class ChatRepo extends Context.Service<ChatRepo, TurnOpenings & {
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

    const findMessages = findTranscript(sql)
    const chatExists = (chatId: ChatKey) =>
      sql<{ n: number }>`SELECT count(*)::int AS n FROM chats WHERE id = ${chatId}`.pipe(
        Effect.map((rows) => (rows[0]?.n ?? 0) > 0)
      )

    const appendBatch = (chatId: ChatKey, batch: string, generation: string | undefined) => appendTo(sql, chatId, batch, generation)
    const openings = makeTurnOpenings(sql, yield* transcriptLimit)

    /** The tools' fragments after chat's own in a list (`WITH` entries, returned columns). */
    const andAlso = (fragments: ReadonlyArray<Statement.Fragment>) =>
      fragments.length === 0 ? sql`` : sql`, ${sql.csv(fragments)}`

    return ChatRepo.of({
      ...openings,
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
