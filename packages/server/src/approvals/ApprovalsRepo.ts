/**
 * Approvals in SQL (docs/tools.md): what a chat asks for is read from its transcript (the
 * assistant message's `metadata.approvals`, found through a partial index), and the decisions are
 * rows of `approval_decisions` (migration 0015), keyed by the chat — whose key holds its user —
 * and the approval. The row is the continuation's claim as well: a lease (`owner`,
 * `lease_until`) that another replica's sweep takes over once it expires, and a state that only
 * moves forward, so a tool is started at most once per approval.
 */
import { ChatMessage, traced } from "@switchboard/domain"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { approvalAsks, chatGeneration, transcriptRows } from "../chat/TranscriptSql.ts"
import type { ChatKey } from "../users/ChatKey.ts"

/** What a chat asks of one approval: the message that made the call, and whether a tool message answers it. */
export interface AskedApproval {
  readonly message: ChatMessage
  readonly answered: boolean
  readonly decided: boolean
}

/** A decision as a continuation claims it. */
export interface ClaimedDecision {
  readonly approvalId: string
  readonly toolCallId: string
  readonly approved: boolean
  readonly reason: string | undefined
  /** `running`: a replica started the tool and died before the continuation ended. */
  readonly state: "decided" | "running"
}

export interface NewDecision {
  readonly approvalId: string
  readonly toolCallId: string
  readonly approved: boolean
  readonly reason?: string | undefined
}

const decodeMessage = Schema.decodeUnknownEffect(ChatMessage)

export class ApprovalsRepo extends Context.Service<ApprovalsRepo, {
  /** The approval as the chat asks for it; `undefined` when it asks for none of that id. */
  asked(chatId: ChatKey, approvalId: string): Effect.Effect<AskedApproval | undefined>
  /**
   * Records decisions, each only if none is (the primary key: one per approval on every
   * replica), claimed for `owner` for `leaseMs`; `done` records them finished (a denial whose
   * answer the caller stores itself). The ids recorded.
   */
  decide(chatId: ChatKey, decisions: ReadonlyArray<NewDecision>, owner: string, leaseMs: number, done?: boolean): Effect.Effect<ReadonlySet<string>>
  /** The chat's unfinished decisions, claimed for `owner` when they are its own or their lease expired. */
  claim(chatId: ChatKey, owner: string, leaseMs: number): Effect.Effect<ReadonlyArray<ClaimedDecision>>
  /** Chats with unfinished decisions whose lease expired (their replica died, or they wait to be retried). */
  due(limit: number): Effect.Effect<ReadonlyArray<ChatKey>>
  /** The tool of an approved decision started: true once, for its owner. */
  start(chatId: ChatKey, approvalId: string, owner: string): Effect.Effect<boolean>
  /** The continuation ended: the decisions finished. */
  finish(chatId: ChatKey, approvalIds: ReadonlyArray<string>, owner: string): Effect.Effect<void>
  /** Calls asked for and not decided, in every chat: the pending gauge. */
  readonly pendingCount: Effect.Effect<number>
  /** The owner gives its claim back, to be taken again in `retryMs` (by any replica). */
  release(chatId: ChatKey, owner: string, retryMs: number): Effect.Effect<void>
}>()("switchboard/server/approvals/ApprovalsRepo") {
  static readonly layer = Layer.effect(ApprovalsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    return ApprovalsRepo.of({
      asked: Effect.fnUntraced(function*(chatId, approvalId) {
        const rows = yield* sql<{ message: unknown; answered: boolean; decided: boolean }>`
          SELECT m.message,
            EXISTS (SELECT 1 FROM ${transcriptRows(sql)} r WHERE r.chat_id = m.chat_id
              AND r.message->'toolResult'->>'toolCallId' = m.message->'metadata'->'approvals'->>${approvalId}) AS answered,
            EXISTS (SELECT 1 FROM approval_decisions d WHERE d.chat_id = m.chat_id AND d.approval_id = ${approvalId}) AS decided
          FROM ${approvalAsks(sql)} m
          WHERE m.chat_id = ${chatId} AND (m.message->'metadata'->'approvals') ? ${approvalId}
          LIMIT 1`
        const row = rows[0]
        if (row === undefined) return undefined
        return { message: yield* decodeMessage(row.message), answered: row.answered, decided: row.decided }
      }, Effect.orDie, traced("ApprovalsRepo.asked")),
      decide: Effect.fnUntraced(function*(chatId, decisions, owner, leaseMs, done = false) {
        if (decisions.length === 0) return new Set<string>()
        // Keys taken in one order by every request: two deciding the same approvals in different
        // orders (two tabs) would each wait for the other's first key.
        const sorted = [...decisions].sort((x, y) => x.approvalId < y.approvalId ? -1 : x.approvalId > y.approvalId ? 1 : 0)
        const rows = yield* sql<{ approval_id: string }>`
          INSERT INTO approval_decisions (chat_id, approval_id, tool_call_id, approved, reason, state, owner, lease_until)
          SELECT ${chatId}, d->>'approvalId', d->>'toolCallId', (d->>'approved')::boolean, d->>'reason',
            ${done ? "done" : "decided"}, ${owner}, now() + ${leaseMs} * interval '1 millisecond'
          FROM jsonb_array_elements(${JSON.stringify(sorted)}::jsonb) WITH ORDINALITY AS t(d, n)
          WHERE ${chatGeneration(sql, sql`${chatId}`)} IS NOT NULL
          ORDER BY n
          ON CONFLICT (chat_id, approval_id) DO NOTHING
          RETURNING approval_id`
        return new Set(rows.map((r) => r.approval_id))
      }, Effect.orDie, traced("ApprovalsRepo.decide")),
      claim: Effect.fnUntraced(function*(chatId, owner, leaseMs) {
        const rows = yield* sql<{ approval_id: string; tool_call_id: string; approved: boolean; reason: string | null; state: "decided" | "running" }>`
          UPDATE approval_decisions SET owner = ${owner}, lease_until = now() + ${leaseMs} * interval '1 millisecond'
          WHERE chat_id = ${chatId} AND state <> 'done' AND (owner = ${owner} OR lease_until < now())
          RETURNING approval_id, tool_call_id, approved, reason, state, decided_at`
        return rows.map((r) => ({
          approvalId: r.approval_id,
          toolCallId: r.tool_call_id,
          approved: r.approved,
          reason: r.reason ?? undefined,
          state: r.state
        }))
      }, Effect.orDie, traced("ApprovalsRepo.claim")),
      due: (limit) =>
        sql<{ chat_id: ChatKey }>`
          SELECT DISTINCT chat_id FROM approval_decisions WHERE state <> 'done' AND lease_until < now() LIMIT ${limit}`.pipe(
          Effect.map((rows) => rows.map((r) => r.chat_id)),
          Effect.orDie
        ),
      start: (chatId, approvalId, owner) =>
        sql`
          UPDATE approval_decisions SET state = 'running'
          WHERE chat_id = ${chatId} AND approval_id = ${approvalId} AND state = 'decided' AND owner = ${owner}
          RETURNING approval_id`.pipe(Effect.map((rows) => rows.length === 1), Effect.orDie, traced("ApprovalsRepo.start")),
      finish: (chatId, approvalIds, owner) =>
        approvalIds.length === 0 ? Effect.void : sql`
          UPDATE approval_decisions SET state = 'done', owner = NULL
          WHERE chat_id = ${chatId} AND approval_id IN ${sql.in(approvalIds)} AND owner = ${owner}`.pipe(Effect.asVoid, Effect.orDie),
      // A turn's asks not decided nor answered, and the sub-agent jobs parked on a call (docs/subagents.md).
      pendingCount: sql<{ n: number }>`
        SELECT count(*)::int + (SELECT count(*)::int FROM jobs WHERE waiting_for IS NOT NULL) AS n FROM ${approvalAsks(sql)} m
          CROSS JOIN LATERAL jsonb_each_text(m.message->'metadata'->'approvals') AS a(approval_id, tool_call_id)
        WHERE NOT EXISTS (SELECT 1 FROM approval_decisions d WHERE d.chat_id = m.chat_id AND d.approval_id = a.approval_id)
          AND NOT EXISTS (SELECT 1 FROM ${transcriptRows(sql)} r WHERE r.chat_id = m.chat_id
            AND r.message->'toolResult'->>'toolCallId' = a.tool_call_id)`.pipe(Effect.map((rows) => rows[0]?.n ?? 0), Effect.orDie),
      release: (chatId, owner, retryMs) =>
        sql`
          UPDATE approval_decisions SET lease_until = now() + ${retryMs} * interval '1 millisecond'
          WHERE chat_id = ${chatId} AND owner = ${owner} AND state <> 'done'`.pipe(Effect.asVoid, Effect.orDie)
    })
  }))
}
