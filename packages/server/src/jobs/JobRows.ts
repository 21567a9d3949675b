/**
 * Jobs as `JobsRepo` reads and writes them: what a claim hands over, what
 * settles a job, and a row of the `jobs` table as the records and claims are
 * made from it.
 */
import type {
  ChatMessage,
  JobInput,
  JobRecord,
  JobStatus,
  JobWaitingFor,
  JsonObject,
  KindName,
  SubagentDefinition,
  SubagentResult
} from "@switchboard/domain"
import { inSchemaOrder } from "@switchboard/domain"
import { toSubagentDefinition } from "./kinds/SubagentKindsRepo.ts"
import type { ChatKey } from "../users/ChatKey.ts"
import { chatIdOf, storedChatKey } from "../users/ChatKey.ts"

export interface NewJob {
  readonly id: string
  readonly chatId: ChatKey
  readonly kind: KindName
  readonly toolCallId: string
  readonly input: JobInput | JsonObject
  /** The context of the turn that dispatched it: its wake turn gets the same system prompt. */
  readonly context: JsonObject | undefined
  /** A defined kind's definition as it was when the job was dispatched: what the job runs. */
  readonly definition?: SubagentDefinition
}

/** A job as a runner or a wake holds it. */
export interface ClaimedJob {
  readonly id: string
  readonly chatId: ChatKey
  readonly kind: KindName
  readonly toolCallId: string
  readonly input: unknown
  readonly context: JsonObject | undefined
  /** A defined kind's definition, as dispatched (absent for a built-in kind). */
  readonly definition: SubagentDefinition | undefined
  /** A parked job's saved sub-agent conversation, when it resumes (`JobParking.ts`). */
  readonly checkpoint: unknown
  readonly activity: string
  readonly result: SubagentResult | undefined
  readonly runAttempts: number
  readonly wakeAttempts: number
  readonly wakeFailures: number
}

/** A wake as claimed: the job, and its chat's transcript as the claiming statement read it. */
export interface ClaimedWake extends ClaimedJob {
  readonly transcript: ReadonlyArray<ChatMessage>
  /**
   * The life of the chat the job belongs to (`chats.generation`): the wake turn writes only to it,
   * never to a chat created again under the same id after the operator deleted this one.
   */
  readonly generation: string
  /** The agent its chat keeps (`chats.agent`): the wake turn is that agent's. */
  readonly agent: string
  /** When its result was stored (epoch milliseconds): the steer's lag is counted from it (`/metrics`). */
  readonly finishedAt?: number
}

/** A wake's job, to settle with its public status in the statement that ends the wake turn. */
export interface Settle {
  readonly jobId: string
  readonly status: Exclude<JobStatus, "running">
}

/** Why a wake goes back to its queue. */
export type WakeDeferral =
  /** A turn holds the chat: due again when it ends (or after the delay, if the marker is gone by then). */
  | "busy"
  /** A client tool call is unanswered: due again when the client's continuation ends. */
  | "pending-call"
  /** The wake turn failed: counted, retried after the delay. */
  | "failed"

export interface JobRow {
  readonly id: string
  readonly chat_id: string
  readonly kind: KindName
  readonly tool_call_id: string
  readonly input: unknown
  readonly context: JsonObject | null
  /** Absent in the rows of statements that do not read it. */
  readonly definition?: unknown
  /** A parked job's saved sub-agent conversation (`JobParking.ts`); absent where not read. */
  readonly checkpoint?: unknown
  /** The call a parked job waits on, until it is decided. */
  readonly waiting_for?: JobWaitingFor | null
  readonly status: JobStatus
  readonly activity: string
  readonly result: SubagentResult | null
  readonly error: string | null
  readonly run_attempts: number
  readonly wake_attempts: number
  readonly wake_failures: number
  readonly created_at: Date | string
  readonly updated_at: Date | string
  readonly finished_at: Date | string | null
  /** Its chat's generation: only in the rows of the statements that claim wakes. */
  readonly chat_generation?: string
  /** Its chat's agent: likewise. */
  readonly chat_agent?: string
}

const iso = (t: Date | string) => new Date(t).toISOString()

/** The columns a `JobRecord` is made of: a listing reads no job's input or context. */
export type RecordRow = Pick<
  JobRow,
  | "id"
  | "kind"
  | "chat_id"
  | "tool_call_id"
  | "status"
  | "activity"
  | "created_at"
  | "updated_at"
  | "finished_at"
  | "result"
  | "error"
  | "waiting_for"
  | "definition"
>

/**
 * A defined kind's result in its schema's order (the `result` column is jsonb: it keeps no key order).
 * Only the schema is read of the stored definition (this code wrote it): a listing is polled.
 */
const ordered = (row: Pick<JobRow, "definition" | "result">): SubagentResult | null => {
  if (row.result === null || row.definition === null || row.definition === undefined) return row.result
  const stored = typeof row.definition === "string" ? JSON.parse(row.definition) as { readonly result?: unknown } : row.definition as { readonly result?: unknown }
  return inSchemaOrder(stored.result, row.result) as SubagentResult
}

export const toRecord = (row: RecordRow): JobRecord => ({
  id: row.id,
  kind: row.kind,
  chatId: chatIdOf(storedChatKey(row.chat_id)),
  toolCallId: row.tool_call_id,
  status: row.status,
  activity: row.activity,
  createdAt: iso(row.created_at),
  updatedAt: iso(row.updated_at),
  ...(row.finished_at === null ? {} : { finishedAt: iso(row.finished_at) }),
  // The finished record appears with the status flip (after the wake turn), never before.
  ...(row.status !== "running" && row.result !== null ? { result: ordered(row)! } : {}),
  ...(row.status !== "running" && row.error !== null ? { error: row.error } : {}),
  ...(row.status === "running" && row.waiting_for !== null && row.waiting_for !== undefined
    ? { waitingFor: { approvalId: row.waiting_for.approvalId, toolName: row.waiting_for.toolName, input: row.waiting_for.input } }
    : {})
})

/** One row of a statement returning wakes with their transcripts: a job, or one message of the job before it. */
export type WakeRow<Extra extends object = Record<never, never>> =
  | { readonly job: JobRow & Extra; readonly message: null }
  | { readonly job: null; readonly message: unknown }

export const toClaimed = (row: JobRow): ClaimedJob => ({
  id: row.id,
  chatId: storedChatKey(row.chat_id),
  kind: row.kind,
  toolCallId: row.tool_call_id,
  input: row.input,
  context: row.context ?? undefined,
  definition: row.definition === null || row.definition === undefined ? undefined : toSubagentDefinition(row.definition),
  checkpoint: row.checkpoint ?? undefined,
  activity: row.activity,
  result: row.result ?? undefined,
  runAttempts: row.run_attempts,
  wakeAttempts: row.wake_attempts,
  wakeFailures: row.wake_failures
})
