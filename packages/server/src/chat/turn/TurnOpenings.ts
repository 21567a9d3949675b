/**
 * A turn's opening statements: the chat's in-flight marker taken (unless a live turn holds it),
 * the chat created when new, the transcript read and the request's new messages appended
 * write-ahead — in one statement, so accepting a turn is one round trip (docs/streaming.md).
 * `ChatRepo` answers with these; the turn (`TurnComposer`) calls them through it.
 */
import { ChatMessage, traced } from "@switchboard/domain"
import { Duration, Effect, Schema } from "effect"
import type { SqlClient } from "effect/sql"
import { retryDeadlock } from "../../db/RetryDeadlock.ts"
import type { ChatKey } from "../../users/ChatKey.ts"
import { appendTo, findTranscript, inBatches, insertMessages, liveChat, takeMarker, touchChat, transcriptSize } from "../TranscriptSql.ts"

/**
 * How much a chat's stored transcript may hold before it takes no more client turns
 * (`CHAT_TRANSCRIPT_MAX_MESSAGES`, `CHAT_TRANSCRIPT_MAX_BYTES`). Checked against what is stored
 * when a client's turn opens: the turn it lets in (its messages, its answer) may take the chat past
 * it, by at most one turn; the server's own turns (a job's wake, an approval's continuation) finish
 * work already accepted and are not refused.
 */
export interface TranscriptLimit {
  readonly messages: number
  readonly bytes: number
}

/** What a client turn's opening statement found (`openTurn`, `Agent`). */
export type OpenedTurn =
  | { readonly _tag: "Taken"; readonly transcript: ReadonlyArray<ChatMessage>; readonly generation: string }
  /** Another live turn holds the chat. */
  | { readonly _tag: "Held" }
  /** The chat is another agent's (`agent`): nothing taken, nothing stored. */
  | { readonly _tag: "OtherAgent"; readonly agent: string }
  /** The chat's transcript is at its limit (`TranscriptLimit`; what it holds): nothing taken, nothing stored. */
  | { readonly _tag: "Full"; readonly messages: number; readonly bytes: number }

/**
 * How a turn opens, and what it finds: the four ways the chat's marker is taken.
 *
 * - `Marker`: the marker for `ttl`, the chat created when new; with `messages`, they are appended,
 *   only when the marker was taken: the first batch in the same statement (a write-ahead turn's
 *   first round trip), any further ones ({@link inBatches}) right after. False when another live
 *   turn holds the chat.
 * - `Reading`: `Marker` on an existing chat, and the transcript, read by the same statement:
 *   `undefined` when another live turn holds the chat; "gone" when there is no chat (deleted since
 *   the caller knew of it: a continuation of its approvals), nothing taken, nothing created — a
 *   missing chat is made anew only by a client's turn (`Agent`, `Marker`). `generation`: the life of the chat the turn was accepted in, to
 *   condition its later writes on (see `liveChat`). The transcript may or may not include
 *   `messages` (ids already stored are left as they were): the caller adds those it lacks. A
 *   statement reads from the snapshot it started with. When a marker row existed at that moment,
 *   the turn that held it may have released it — and stored its answer — while this statement
 *   waited for its row: the transcript is then read again, under the marker, by a second
 *   statement. Without one, the chat was idle when the statement began, so nothing was stored
 *   after its snapshot.
 * - `Agent`: `Reading` for a turn of `agent` (a client's turn): a new chat is created as that
 *   agent's, and an existing one is opened only if it is that agent's — else nothing is taken or
 *   stored and the chat's agent is answered (`OtherAgent`), in the same one statement, so a turn
 *   that assumed the right agent (almost all) costs nothing more. A chat whose transcript is at its
 *   limit ({@link TranscriptLimit}) is not opened either: `Full`, with what it holds.
 * - `Unchanged`: the marker for a turn whose caller read the transcript just before (a wake):
 *   `messages` are appended only if the chat still has exactly `known` messages (messages are
 *   never removed, so the count says whether anything was stored since) and no marker row existed
 *   when the statement began (see `Reading`). True: taken, nothing new, appended; false: taken,
 *   perhaps something new, nothing appended; `undefined`: another live turn holds the chat;
 *   "gone": the chat (that `generation` of it, when given) no longer exists, nothing taken or stored.
 */
export type OpenMode =
  | { readonly _tag: "Marker"; readonly messages?: ReadonlyArray<ChatMessage> }
  | { readonly _tag: "Reading"; readonly messages?: ReadonlyArray<ChatMessage> }
  | { readonly _tag: "Agent"; readonly messages: ReadonlyArray<ChatMessage>; readonly agent: string }
  | {
    readonly _tag: "Unchanged"
    readonly known: number
    readonly messages: ReadonlyArray<ChatMessage>
    readonly generation?: string | undefined
  }

/** What each way of opening finds (`OpenMode`). */
export interface Opened {
  readonly Marker: boolean
  readonly Reading: { readonly transcript: ReadonlyArray<ChatMessage>; readonly generation: string } | undefined | "gone"
  readonly Agent: OpenedTurn
  readonly Unchanged: boolean | "gone" | undefined
}

/** The openings `ChatRepo` answers with. */
export interface TurnOpenings {
  /** Opens a turn of the chat `mode`'s way (`OpenMode`). */
  openTurn<M extends OpenMode>(chatId: ChatKey, turnId: string, ttl: Duration.Input, mode: M): Effect.Effect<Opened[M["_tag"]]>
}

export const makeTurnOpenings = (sql: SqlClient.SqlClient, limit: TranscriptLimit): TurnOpenings => {
  const findMessages = findTranscript(sql)
  const appendBatch = (chatId: ChatKey, batch: string, generation: string | undefined) => appendTo(sql, chatId, batch, generation)
  const decodeTranscript = Schema.decodeUnknownEffect(Schema.Array(ChatMessage))

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
    // is neither: nothing is taken, and the caller opens again (the next snapshot sees it). Without
    // one (`Reading`): only on a chat the snapshot shows, none created.
    const created = agent === undefined
      ? sql`SELECT NULL::uuid AS generation WHERE false`
      : sql`INSERT INTO chats (id, agent) VALUES (${chatId}, ${agent}) ON CONFLICT (id) DO NOTHING RETURNING generation`
    const agentHolds = agent === undefined
      ? sql`EXISTS (SELECT 1 FROM chats WHERE id = ${chatId})`
      : sql`(EXISTS (SELECT 1 FROM chat) OR EXISTS (SELECT 1 FROM chats WHERE id = ${chatId} AND agent = ${agent}))
        AND NOT (SELECT capped FROM stored)`
    // A client's turn only on a chat below its limit (a chat this statement creates holds nothing).
    const stored = agent === undefined
      ? sql`SELECT 0::int8 AS n, 0::int8 AS bytes, false AS capped`
      : sql`SELECT s.n, s.bytes, NOT EXISTS (SELECT 1 FROM chat) AND (s.n >= ${limit.messages} OR s.bytes >= ${limit.bytes}) AS capped
        FROM (${transcriptSize(sql, chatId)}) AS s`
    // The statement's snapshot predates its own inserts, so the rows read are the transcript
    // before this turn; one row with a null message stands for "nothing stored yet" (and, when
    // the marker was not taken, is the only row: it says whose chat it is). The generation is the
    // new row's, or the one the snapshot saw. A chat this statement created holds nothing yet, whatever
    // the snapshot shows: a chat deleted as this statement began — its insert waited for the delete,
    // then made the chat anew — is still there, messages and all, in the snapshot.
    const rows = yield* retryDeadlock(sql<{
      message: unknown
      held: boolean
      taken: boolean
      agent: string | null
      generation: string | null
      capped: boolean
      stored_n: number | string
      stored_bytes: number | string
    }>`
      WITH chat AS (${created}),
      stored AS (${stored}),
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
        coalesce((SELECT generation FROM chat), (SELECT generation FROM chats WHERE id = ${chatId}))::text AS generation,
        (SELECT capped FROM stored) AS capped, (SELECT n FROM stored) AS stored_n, (SELECT bytes FROM stored) AS stored_bytes
      FROM (SELECT 1) AS one LEFT JOIN chat_messages m ON EXISTS (SELECT 1 FROM marker) AND NOT EXISTS (SELECT 1 FROM chat)
        AND m.chat_id = ${chatId}
      ORDER BY m.seq`)
    const head = rows[0]!
    if (!head.taken) {
      if (agent === undefined) return head.generation === null ? { _tag: "Gone" } as const : { _tag: "Held" } as const
      if (head.agent !== null && head.agent !== agent) return { _tag: "OtherAgent", agent: head.agent } as const
      if (head.capped) return { _tag: "Full", messages: Number(head.stored_n), bytes: Number(head.stored_bytes) } as const
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
  const openReading = (
    chatId: ChatKey,
    turnId: string,
    ttl: Duration.Input,
    messages: ReadonlyArray<ChatMessage>,
    agent: string | undefined
  ): Effect.Effect<OpenedTurn | { readonly _tag: "Gone" }> =>
    openOnce(chatId, turnId, ttl, messages, agent).pipe(
      Effect.flatMap((opened) =>
        opened !== undefined
          ? Effect.succeed(opened)
          : openOnce(chatId, turnId, ttl, messages, agent).pipe(Effect.map((again) => again ?? { _tag: "Held" } as const))
      ),
      Effect.orDie,
      traced("ChatRepo.openTurn")
    )

  const reading = (chatId: ChatKey, turnId: string, ttl: Duration.Input, messages: ReadonlyArray<ChatMessage> = []) =>
    openReading(chatId, turnId, ttl, messages, undefined).pipe(
      Effect.map((opened) =>
        opened._tag === "Taken"
          ? { transcript: opened.transcript, generation: opened.generation }
          : opened._tag === "Gone"
          ? "gone" as const
          : undefined
      )
    )

  const unchanged = Effect.fnUntraced(function*(
    chatId: ChatKey,
    turnId: string,
    ttl: Duration.Input,
    known: number,
    messages: ReadonlyArray<ChatMessage>,
    generation: string | undefined
  ) {
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
  }, Effect.orDie, traced("ChatRepo.openTurn.Unchanged"))

  const marker = Effect.fnUntraced(function*(chatId: ChatKey, turnId: string, ttl: Duration.Input, messages: ReadonlyArray<ChatMessage> = []) {
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
  }, Effect.orDie, traced("ChatRepo.openTurn.Marker"))

  return {
    openTurn: <M extends OpenMode>(chatId: ChatKey, turnId: string, ttl: Duration.Input, mode: M) => {
      const opened: Effect.Effect<Opened[OpenMode["_tag"]]> = mode._tag === "Marker"
        ? marker(chatId, turnId, ttl, mode.messages)
        : mode._tag === "Reading"
        ? reading(chatId, turnId, ttl, mode.messages)
        : mode._tag === "Agent"
        ? openReading(chatId, turnId, ttl, mode.messages, mode.agent).pipe(
          // An agent's opening creates a missing chat: it never finds none.
          Effect.flatMap((opened) => opened._tag === "Gone" ? Effect.die(new Error(`chat ${chatId}: no chat after creating it`)) : Effect.succeed(opened))
        )
        : unchanged(chatId, turnId, ttl, mode.known, mode.messages, mode.generation)
      return opened as Effect.Effect<Opened[M["_tag"]]>
    }
  }
}
