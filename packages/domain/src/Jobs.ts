/**
 * Sub-agent jobs (docs/jobs.md) — "ack now, steer later".
 *
 * The job tools (`research`, `demo`, `visual`) are executed by the server: a
 * call creates a job record, starts the sub-agent in the background and is
 * answered at once with an acknowledgement. The finished result comes back
 * into the chat as a *steer message* (`buildSubagentSteer`): a user-role
 * message whose text part is all the model sees, and whose
 * `data-subagent-artifact` part carries the full result for UIs.
 *
 * Everything here is pure and shared by the server (runner, wake pipeline),
 * the CLI (dispatch cards, results) and tests.
 */
import { Schema } from "effect"
import type { ChatMessage, ToolCall } from "./Chat.ts"
import { JsonObject, NonEmptyText, Text } from "./Json.ts"
import { toolFromSchema } from "./ToolFromSchema.ts"
import { isBuiltInKind, isKindName, KindName } from "./JobKind.ts"
import type { JobKind } from "./JobKind.ts"
import { definedKindSpec } from "./SubagentKinds.ts"
import type { ToolSchema } from "./ToolSchema.ts"
import type { JobKindSpec } from "./JobKindSpec.ts"

export type { JobKindSpec }

export const JobStatus = Schema.Literals(["running", "done", "error"])
export type JobStatus = typeof JobStatus.Type

// ---------------------------------------------------------------------------
// Tool inputs (each the one declaration of its job tool's arguments, see "The job tools" below) and results

export const ResearchToolInput = Schema.Struct({
  question: NonEmptyText.annotate({ description: "The question to research." }),
  context: Schema.optionalKey(Text.annotate({ description: "What you need the answer for: focuses the brief." }))
})
export type ResearchToolInput = typeof ResearchToolInput.Type

export const DemoToolInput = Schema.Struct({
  title: NonEmptyText.annotate({ description: "The demo's title." }),
  brief: NonEmptyText.annotate({ description: "Concept, parameters and interactions, visual style." })
})
export type DemoToolInput = typeof DemoToolInput.Type

export const VisualToolInput = Schema.Struct({
  brief: NonEmptyText.annotate({ description: "What the figure must show, exactly." })
})
export type VisualToolInput = typeof VisualToolInput.Type

export const ResearchSource = Schema.Struct({ title: Schema.String, url: Schema.String })
export type ResearchSource = typeof ResearchSource.Type

export const ResearchResult = Schema.Struct({
  brief: Schema.String,
  sources: Schema.Array(ResearchSource)
})
export type ResearchResult = typeof ResearchResult.Type

export const DemoResult = Schema.Struct({
  title: Schema.String,
  /** Self-contained single-file HTML/JS document (sandboxed-iframe ready); empty on failure. */
  html: Schema.String,
  /**
   * The builder headlessly executed the demo before delivery. The spec types it
   * `true`; the failure shape (empty `html`) carries `false`.
   */
  tested: Schema.Boolean,
  notes: Schema.optionalKey(Schema.String)
})
export type DemoResult = typeof DemoResult.Type

export const VisualResult = Schema.Struct({
  /** Complete SVG markup (verified by the maker looking at the render); empty on failure. */
  svg: Schema.String,
  notes: Schema.optionalKey(Schema.String)
})
export type VisualResult = typeof VisualResult.Type

/**
 * A sub-agent's result: a built-in kind's shape, or the object a defined kind's sub-agent submitted
 * (what its `result` schema says). On the wire any JSON object, kept whole: a defined kind's result
 * may have any keys, and decoding it as a built-in shape would drop the ones that shape lacks.
 */
export type SubagentResult = ResearchResult | DemoResult | VisualResult | JsonObject
export const SubagentResult: Schema.Codec<SubagentResult> = JsonObject

// ---------------------------------------------------------------------------
// The job tools as the model sees them, derived from their inputs

export const ResearchTool: ToolSchema = toolFromSchema(
  "research",
  "Dispatch a research sub-agent in the background: it searches the web, reads sources and writes a sourced brief. " +
    "Returns at once with an acknowledgement; the brief arrives later as a message. Continue your turn meanwhile.",
  ResearchToolInput
)

export const DemoTool: ToolSchema = toolFromSchema(
  "demo",
  "Dispatch a builder sub-agent in the background: it writes one self-contained interactive HTML demo and tests it " +
    "in a headless browser. Returns at once with an acknowledgement; the demo arrives later as a message.",
  DemoToolInput
)

export const VisualTool: ToolSchema = toolFromSchema(
  "visual",
  "Dispatch a visual-maker sub-agent in the background: it draws ONE SVG figure and checks its render. Returns at " +
    "once with an acknowledgement; the figure arrives later as a message.",
  VisualToolInput
)

// ---------------------------------------------------------------------------
// The kinds: each built-in kind's part of the domain in one spec, and the
// generic helpers below look a kind up here instead of switching on its name;
// a kind an operator defined has the defined kinds' spec (`SubagentKinds.ts`).
// The server's registry of kinds adds what only the server needs.

const jobKindSpec = <K extends string, I, R>(spec: JobKindSpec<K, I, R>) => spec

const researchFailed = (r: ResearchResult) => r.sources.length === 0 && /^Research failed:/i.test(r.brief)

export const ResearchJob = jobKindSpec({
  kind: "research",
  tool: ResearchTool,
  input: ResearchToolInput,
  result: ResearchResult,
  isFailure: researchFailed,
  failure: (_input, reason) => ({ brief: `Research failed: ${reason}`, sources: [] }),
  failureReason: (r) => researchFailed(r) ? r.brief.replace(/^Research failed:\s*/i, "") : undefined,
  steerText: (r) =>
    researchFailed(r)
      ? `${r.brief}\n\nContinue with what you can establish and flag the uncertainty to the learner.`
      : `Research complete — the researcher's full brief follows. Weave it into the lesson and cite its sources when you use its findings:\n\n${r.brief}`
})

/**
 * A kind whose result is one artifact (a document, a figure) with the maker's notes: an empty
 * artifact is its failure shape, and the notes say why.
 */
const artifactKind = <K extends string, I, R extends { readonly notes?: string }>(
  spec: Omit<JobKindSpec<K, I, R>, "isFailure" | "failureReason" | "steerText"> & {
    readonly artifact: (result: R) => unknown
    readonly steerText: (result: R, failed: boolean) => string
  }
): JobKindSpec<K, I, R> => {
  const { artifact, steerText, ...identity } = spec
  const isFailure = (result: R) => {
    const made = artifact(result)
    return typeof made !== "string" || made.length === 0
  }
  return {
    ...identity,
    isFailure,
    failureReason: (result) => isFailure(result) ? result.notes ?? "failed" : undefined,
    steerText: (result) => steerText(result, isFailure(result))
  }
}

export const DemoJob = artifactKind({
  kind: "demo", tool: DemoTool, input: DemoToolInput, result: DemoResult,
  artifact: (r) => r.html,
  failure: (input, reason) => ({ title: input.title ?? "demo", html: "", tested: false, notes: reason }),
  steerText: (r, failed) =>
    failed
      ? `The demo "${r.title}" could not be built: ${
        r.notes ?? "unknown reason"
      }. Fall back to explaining in prose; if the brief was the problem, re-call demo with a tighter one.`
      : `The demo "${r.title}" is built, headlessly tested, and rendered in the lesson. Builder notes: ${
        r.notes ?? "(none)"
      }.\nTeach with it — reference its controls by name and point the learner at what to try.`
})

export const VisualJob = artifactKind({
  kind: "visual", tool: VisualTool, input: VisualToolInput, result: VisualResult,
  artifact: (r) => r.svg,
  failure: (_input, reason) => ({ svg: "", notes: reason }),
  steerText: (r, failed) =>
    failed
      ? `The figure could not be made: ${
        r.notes ?? "unknown reason"
      }. Fall back to prose or mermaid, or re-call visual with a tighter brief.`
      : `The figure is drawn, verified by inspection, and rendered in the lesson. Maker notes: ${
        r.notes ?? "(none)"
      }.\nReference its elements as you teach.`
})


/** Every kind's spec, by kind (the order is the job tools' order). */
export const jobKindSpecs = {
  research: ResearchJob,
  demo: DemoJob,
  visual: VisualJob
} as const satisfies { readonly [K in JobKind]: JobKindSpec<K, any, any> }

type SpecOf<K extends JobKind> = (typeof jobKindSpecs)[K]

/** The input each kind's tool takes, by kind. */
export type JobInputs = { readonly [K in JobKind]: SpecOf<K>["input"]["Type"] }
export type JobInput = JobInputs[JobKind]

/** The result each kind's sub-agent gives, by kind. */
export type JobResults = { readonly [K in JobKind]: SpecOf<K>["result"]["Type"] }

export const jobInputSchemas: { readonly [K in JobKind]: SpecOf<K>["input"] } = {
  research: ResearchJob.input,
  demo: DemoJob.input,
  visual: VisualJob.input
}

/**
 * A kind's spec where the kind is only known at run time (its input and result typed loosely): a
 * built-in kind's own, any other the defined kinds' (`definedKindSpec`).
 */
export const jobKindSpecOf = (kind: string): JobKindSpec<string, any, any> =>
  isBuiltInKind(kind) ? jobKindSpecs[kind] : definedKindSpec(kind)

/** The server-executed job tools, offered beside the client tools only in a chat with a `chatId`. */
export const jobToolSchemas: ReadonlyArray<ToolSchema> = Object.values(jobKindSpecs).map((spec) => spec.tool)

/** Whether `name` is a built-in kind (a defined kind's name is any other `KindName`). */
export const isJobKind = (name: string): name is JobKind => isBuiltInKind(name)

// ---------------------------------------------------------------------------
// The job record (GET /api/jobs?chatId=…)

/** The call a parked job waits on. */
export const JobWaitingFor = Schema.Struct({
  approvalId: Schema.String,
  toolName: Schema.String,
  input: JsonObject
})
export type JobWaitingFor = typeof JobWaitingFor.Type

/** A parked job's activity line. */
export const waitingActivity = (toolName: string) => `waiting for approval: ${toolName}`

export const JobRecord = Schema.Struct({
  id: Schema.String,
  kind: KindName,
  chatId: Schema.String,
  /** The provider's id of the job tool call this job fulfils. */
  toolCallId: Schema.String,
  status: JobStatus,
  /** Latest human-readable activity line, e.g. `web_search: "sigma.js v3"`. */
  activity: Schema.String,
  createdAt: Schema.String,
  updatedAt: Schema.String,
  /** When the sub-agent finished (its result stored, the steer queued); absent while it runs. */
  finishedAt: Schema.optionalKey(Schema.String),
  /** The sub-agent's result (the steer artifact's payload). */
  result: Schema.optionalKey(SubagentResult),
  error: Schema.optionalKey(Schema.String),
  /**
   * A sub-agent's MCP call waiting for the user's decision (docs/subagents.md): the job is parked,
   * still `running`, until `POST /api/chats/{chatId}/approvals/{approvalId}` decides it.
   */
  waitingFor: Schema.optionalKey(JobWaitingFor)
})
export type JobRecord = typeof JobRecord.Type

/**
 * Where a page of jobs ends (`nextAfter`), to ask for the next with `after`: opaque to a client. At
 * most 18 digits: every such number is a PostgreSQL bigint (a 19-digit one may not be: a 400, not a 500).
 */
export const JobCursor = Schema.String.check(Schema.isPattern(/^\d{1,18}$/, { description: "a page's `nextAfter`" }))

/** The most job ids one listing names (`ids`). */
export const JOBS_IDS_MAX = 100

/**
 * Some of a chat's jobs by id (`GET /api/jobs?ids=`): comma-separated, at most {@link JOBS_IDS_MAX}. What
 * a client asks when it wants the results of the jobs that just settled, not of every job again.
 */
export const JobIdList = Schema.String.check(
  Schema.isPattern(new RegExp(`^[A-Za-z0-9_-]{1,64}(,[A-Za-z0-9_-]{1,64}){0,${JOBS_IDS_MAX - 1}}$`), {
    description: `job ids, comma-separated, at most ${JOBS_IDS_MAX}`
  })
)

/** The most jobs a page holds; a page also ends before its results pass 16 MiB. */
export const JOBS_PAGE_MAX = 1000

export const JobList = Schema.Struct({
  jobs: Schema.Array(JobRecord),
  /** More jobs follow: pass as `after` for the next page. Absent on the last page. */
  nextAfter: Schema.optionalKey(JobCursor)
})
export type JobList = typeof JobList.Type

/** The job tool's result, forever: what the model reads as the call's outcome. */
export const jobAcknowledgement = (job: Pick<JobRecord, "id" | "kind">) => ({
  status: "dispatched",
  jobId: job.id,
  kind: job.kind,
  message: `The ${job.kind} job is dispatched and runs in the background; its result will arrive as a message. Continue your turn.`
})

// ---------------------------------------------------------------------------
// Steer messages (docs/jobs.md, "The steer message")

export interface SubagentResultMeta {
  readonly jobId: string
  readonly kind: KindName
  readonly toolCallId: string
}

export interface SubagentArtifactData {
  readonly kind: KindName
  readonly result: SubagentResult
}

/** Whether a result is the failure shape (html/svg empty, failure brief). */
export const isSubagentFailure = (kind: KindName, result: SubagentResult): boolean => jobKindSpecOf(kind).isFailure(result)

/** The failure shape of each kind, with the reason where the kind has room for one. */
export const subagentFailure = (kind: KindName, input: JobInput | JsonObject, reason: string): SubagentResult =>
  jobKindSpecOf(kind).failure(input, reason)

/** The model-facing text of a steer: what the result IS, what to do with it (the spec's wording). */
export const steerText = (kind: KindName, result: SubagentResult): string => jobKindSpecOf(kind).steerText(result)

/** The id of a job's steer message: deterministic, so re-delivery is idempotent. */
export const steerMessageId = (jobId: string) => `steer_${jobId}`

/**
 * The steer message for a finished job (pure). A user-role ChatMessage whose
 * `content` is the text part's text — all a provider ever sees of it (data
 * parts are never sent) — with `metadata.subagentResult` marking it as a
 * sub-agent result, never a user interjection.
 */
export const buildSubagentSteer = (
  job: Pick<JobRecord, "id" | "kind" | "toolCallId">,
  result: SubagentResult,
  timestamp = 0
): ChatMessage => {
  const text = steerText(job.kind, result)
  return {
    id: steerMessageId(job.id),
    role: "user",
    content: text,
    metadata: { subagentResult: { jobId: job.id, kind: job.kind, toolCallId: job.toolCallId } },
    parts: [
      { type: "text", text },
      { type: "data-subagent-artifact", data: { kind: job.kind, result } }
    ],
    timestamp
  }
}

/**
 * The tool calls of a transcript that no tool message answers yet. Job calls
 * are answered (by their acknowledgement) in the transaction that stores
 * them, so what is left is the client's: while any is, the provider
 * conversation cannot go on without the client's results.
 */
export const unansweredToolCalls = (messages: ReadonlyArray<ChatMessage>): ReadonlyArray<ToolCall> => {
  const answered = new Set(messages.flatMap((m) => m.toolResult ? [m.toolResult.toolCallId] : []))
  return messages.flatMap((m) => m.role === "assistant" ? (m.toolCalls ?? []) : []).filter((c) => !answered.has(c.id))
}

/** The steer's sub-agent marker, when a message is a steer. */
export const subagentResultOf = (message: ChatMessage): SubagentResultMeta | undefined => {
  const meta = message.metadata?.["subagentResult"]
  if (typeof meta !== "object" || meta === null) return undefined
  const { jobId, kind, toolCallId } = meta as Record<string, unknown>
  return typeof jobId === "string" && typeof kind === "string" && isKindName(kind) && typeof toolCallId === "string"
    ? { jobId, kind, toolCallId }
    : undefined
}

/**
 * Whether a message claims to be a sub-agent's result (a steer's id, marker or artifact). Only the
 * server writes such messages: a client may send back one the transcript holds, never a new one.
 */
export const claimsSubagentResult = (message: ChatMessage): boolean =>
  message.id.startsWith(steerMessageId("")) ||
  message.metadata?.["subagentResult"] !== undefined ||
  (message.parts ?? []).some((part) => part.type === "data-subagent-artifact")

/** The steer's artifact (the full result), when a message is a steer. */
export const subagentArtifactOf = (message: ChatMessage): SubagentArtifactData | undefined => {
  const part = message.parts?.find((p) => p.type === "data-subagent-artifact")
  const data = part !== undefined && "data" in part ? part.data : undefined
  if (typeof data !== "object" || data === null) return undefined
  const { kind, result } = data as Record<string, unknown>
  return typeof kind === "string" && isKindName(kind) && typeof result === "object" && result !== null
    ? { kind, result: result as SubagentResult }
    : undefined
}

/** True when the transcript already carries this job's steer (idempotent delivery). */
export const steerDelivered = (messages: ReadonlyArray<ChatMessage>, jobId: string): boolean =>
  messages.some((m) => {
    const meta = m.metadata?.["subagentResult"] as { jobId?: unknown } | undefined
    return meta?.jobId === jobId
  })
