/**
 * The planner proxy and the host control plane, on the wire (docs/planner.md).
 *
 * Three audiences share these schemas: host agents (heartbeat, claim, lease,
 * result, one planner decision per step), operators (the `/admin` routes and
 * `switchboard admin …`), and the server that answers both.
 */
import { Schema } from "effect"
import { JsonObject, JsonValue, NonEmptyText, Text } from "./Json.ts"
import { ImageMediaType } from "./Provider.ts"

/** Ids appear in URLs: a safe alphabet, like chat ids. */
const Id = (what: string) =>
  Text.check(Schema.isPattern(/^[A-Za-z0-9_.:-]{1,128}$/, {
    description: `${what}: 1 to 128 characters of A-Z a-z 0-9 _ . : -`
  }))

export const HostId = Id("host id")
export type HostId = typeof HostId.Type
export const TaskId = Id("task id")
export type TaskId = typeof TaskId.Type
export const ProfileId = Id("provider profile id")
export type ProfileId = typeof ProfileId.Type

/** A task's attempt: 1 for the first claim; a task whose lease expired is claimed again as `attempt + 1`. */
export const Attempt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))

/** An ISO-8601 timestamp, as every time on the wire. */
export const Timestamp = Schema.String

// ---------------------------------------------------------------------------
// Host routes (`Authorization: Bearer <host token>`)

export const HeartbeatResponse = Schema.Struct({ serverTime: Timestamp })
export type HeartbeatResponse = typeof HeartbeatResponse.Type

export const ClaimedTask = Schema.Struct({
  taskId: TaskId,
  attempt: Attempt,
  goal: Schema.String,
  leaseExpiresAt: Timestamp
})
export type ClaimedTask = typeof ClaimedTask.Type

export const ClaimResponse = Schema.Struct({ task: ClaimedTask })
export type ClaimResponse = typeof ClaimResponse.Type

export const LeaseRequest = Schema.Struct({ hostId: HostId, attempt: Attempt })
export type LeaseRequest = typeof LeaseRequest.Type

export const LeaseResponse = Schema.Struct({ leaseExpiresAt: Timestamp })
export type LeaseResponse = typeof LeaseResponse.Type

export const ResultStatus = Schema.Literals(["succeeded", "failed"])
export type ResultStatus = typeof ResultStatus.Type

export const ResultRequest = Schema.Struct({
  hostId: HostId,
  attempt: Attempt,
  status: ResultStatus,
  /** What the host reports: the `finish` summary, the failure reason, … (any JSON). */
  output: JsonValue
})
export type ResultRequest = typeof ResultRequest.Type

// ---------------------------------------------------------------------------
// The planner decision

/** A tool the planner may choose, its arguments described by a JSON Schema object. */
export const PlannerTool = Schema.Struct({
  name: NonEmptyText.check(Schema.isPattern(/^[A-Za-z0-9_-]{1,64}$/, {
    description: "1 to 64 characters of A-Z a-z 0-9 _ - (what both provider APIs accept as a tool name)"
  })),
  description: Schema.optionalKey(Text),
  parameters: JsonObject
})
export type PlannerTool = typeof PlannerTool.Type

/** Base64 without a `data:` prefix. */
export const Base64 = Schema.String.check(Schema.isPattern(/^[A-Za-z0-9+/]*={0,2}$/, {
  description: "base64 (no data: prefix)"
}))

export const Screenshot = Schema.Struct({ mediaType: ImageMediaType, data: Base64.check(Schema.isMinLength(1)) })
export type Screenshot = typeof Screenshot.Type

export const DecisionRequest = Schema.Struct({
  hostId: HostId,
  taskId: TaskId,
  attempt: Attempt,
  systemPrompt: Text,
  userPrompt: Text,
  tools: Schema.Array(PlannerTool).check(Schema.isMinLength(1)),
  /** Used only for the provider call; never persisted. */
  screenshot: Schema.optionalKey(Screenshot),
  /** Ignored: the active provider profile's timeout applies. Accepted so hosts may send it. */
  timeoutMs: Schema.optionalKey(Schema.Number)
})
export type DecisionRequest = typeof DecisionRequest.Type

export const Decision = Schema.Struct({
  toolName: Schema.String,
  arguments: JsonObject,
  /** Counts from 0 within `(taskId, attempt)`. */
  stepIndex: Schema.Int
})
export type Decision = typeof Decision.Type

// ---------------------------------------------------------------------------
// Admin routes (`Authorization: Bearer $ADMIN_TOKEN`)

export const CreateHostRequest = Schema.Struct({ name: NonEmptyText.check(Schema.isMaxLength(200)) })
export type CreateHostRequest = typeof CreateHostRequest.Type

/** The token is shown here once; the server keeps only its hash. */
export const CreatedHost = Schema.Struct({ hostId: HostId, token: Schema.String })
export type CreatedHost = typeof CreatedHost.Type

export const HostView = Schema.Struct({
  hostId: HostId,
  name: Schema.String,
  createdAt: Timestamp,
  lastHeartbeatAt: Schema.NullOr(Timestamp),
  /** When the operator revoked the host (its token refused since); null while it is active. */
  revokedAt: Schema.NullOr(Timestamp)
})
export type HostView = typeof HostView.Type

export const HostList = Schema.Struct({ hosts: Schema.Array(HostView) })
export type HostList = typeof HostList.Type

/** `cancelled`: by the operator (`POST /admin/tasks/{taskId}/cancel`); terminal, like succeeded and failed. */
export const TaskStatus = Schema.Literals(["queued", "running", "succeeded", "failed", "cancelled"])
export type TaskStatus = typeof TaskStatus.Type

export const isTerminal = (status: TaskStatus): boolean =>
  status === "succeeded" || status === "failed" || status === "cancelled"

export const CreateTaskRequest = Schema.Struct({
  goal: NonEmptyText,
  /** Only this host may claim it; without it any host may, oldest first. */
  hostId: Schema.optionalKey(HostId)
})
export type CreateTaskRequest = typeof CreateTaskRequest.Type

export const CreatedTask = Schema.Struct({ taskId: TaskId })
export type CreatedTask = typeof CreatedTask.Type

export const TaskView = Schema.Struct({
  taskId: TaskId,
  status: TaskStatus,
  attempt: Attempt,
  /** The host running or last running it; before any claim, the host it is reserved for (null: any host). */
  hostId: Schema.NullOr(HostId),
  goal: Schema.String,
  createdAt: Timestamp,
  /** While running: when the current lease ends unless renewed. */
  leaseExpiresAt: Schema.optionalKey(Timestamp),
  /** Set once the task is terminal (succeeded, failed or cancelled). */
  terminalAt: Schema.optionalKey(Timestamp),
  /** The host's reported output, once terminal. */
  output: Schema.optionalKey(JsonValue)
})
export type TaskView = typeof TaskView.Type

export const TaskList = Schema.Struct({ tasks: Schema.Array(TaskView) })
export type TaskList = typeof TaskList.Type

/** A rotated host token: shown in this answer only, stored as a hash. */
export const RotatedHostToken = Schema.Struct({ hostId: HostId, token: Schema.String })
export type RotatedHostToken = typeof RotatedHostToken.Type

export const TaskListQuery = {
  status: Schema.optionalKey(TaskStatus),
  hostId: Schema.optionalKey(HostId),
  /** At most this many (default 100, at most 1000). */
  limit: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1000 })))
}

export const ProviderKind = Schema.Literals(["openai-compatible", "anthropic"])
export type ProviderKind = typeof ProviderKind.Type

/** An http(s) URL including the API version path, e.g. `https://api.openai.com/v1`. */
export const BaseUrl = Text.check(Schema.isPattern(/^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/, {
  description: "an http(s) URL such as https://api.openai.com/v1 (no query string)"
}))

export const CreateProfileRequest = Schema.Struct({
  name: NonEmptyText.check(Schema.isMaxLength(200)),
  provider: ProviderKind,
  model: NonEmptyText,
  timeoutMs: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 600_000 })),
  /** Default: the provider's public API (`https://api.openai.com/v1`, `https://api.anthropic.com/v1`). */
  baseUrl: Schema.optionalKey(BaseUrl),
  /** Stored encrypted (AES-256-GCM under CREDENTIAL_KEY); never shown again. */
  apiKey: NonEmptyText
})
export type CreateProfileRequest = typeof CreateProfileRequest.Type

export const CreatedProfile = Schema.Struct({ profileId: ProfileId })
export type CreatedProfile = typeof CreatedProfile.Type

export const ProfileView = Schema.Struct({
  profileId: ProfileId,
  name: Schema.String,
  provider: ProviderKind,
  model: Schema.String,
  timeoutMs: Schema.Int,
  baseUrl: Schema.String,
  active: Schema.Boolean,
  /** Which credential key encrypts the stored API key (a fingerprint, not the key): compare after a rotation. */
  credentialKeyId: Schema.String,
  createdAt: Timestamp
})
export type ProfileView = typeof ProfileView.Type

export const ProfileList = Schema.Struct({ profiles: Schema.Array(ProfileView) })
export type ProfileList = typeof ProfileList.Type

export const RotationReport = Schema.Struct({
  /** The fingerprint of the current CREDENTIAL_KEY: every profile's `credentialKeyId` once all are re-encrypted. */
  keyId: Schema.String,
  reencrypted: Schema.Int,
  alreadyCurrent: Schema.Int,
  /** Profiles under a key that is neither CREDENTIAL_KEY nor CREDENTIAL_KEY_PREVIOUS: left as they are. */
  undecryptable: Schema.Array(ProfileId),
  /** The agents' MCP server headers, sealed under the same key: the same counts, by `agent/server`. */
  mcpHeaders: Schema.optionalKey(Schema.Struct({
    reencrypted: Schema.Int,
    alreadyCurrent: Schema.Int,
    undecryptable: Schema.Array(Schema.String)
  }))
})
export type RotationReport = typeof RotationReport.Type

/** Where a page of decisions ends: `<attempt>:<stepIndex>` of its last decision (`nextAfter`). */
export const DecisionCursor = Schema.String.check(Schema.isPattern(/^\d{1,9}:\d{1,9}$/, {
  description: "`<attempt>:<stepIndex>`: a page's `nextAfter`"
}))

/** The most decisions a page holds; a page also ends before its prompts and arguments pass 16 MiB. */
export const DECISIONS_PAGE_MAX = 1000

export const DecisionsQuery = {
  taskId: TaskId,
  attempt: Schema.optionalKey(Attempt),
  /** At most this many decisions (default and most 1,000). */
  limit: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: DECISIONS_PAGE_MAX }))),
  /** The decisions after this one (a page's `nextAfter`). */
  after: Schema.optionalKey(DecisionCursor)
}

export const DecisionRecord = Schema.Struct({
  taskId: TaskId,
  attempt: Attempt,
  stepIndex: Schema.Int,
  systemPrompt: Schema.String,
  userPrompt: Schema.String,
  toolName: Schema.String,
  arguments: JsonObject,
  createdAt: Timestamp
})
export type DecisionRecord = typeof DecisionRecord.Type

export const DecisionList = Schema.Struct({
  decisions: Schema.Array(DecisionRecord),
  /** More decisions follow: pass as `after` for the next page. Absent on the last page. */
  nextAfter: Schema.optionalKey(DecisionCursor)
})
export type DecisionList = typeof DecisionList.Type

export const PruneReport = Schema.Struct({
  /** Planner decisions deleted. */
  deleted: Schema.Int,
  /** Hourly token usage rows deleted (docs/usage.md): kept as long as decisions. */
  usageRows: Schema.optionalKey(Schema.Int)
})
export type PruneReport = typeof PruneReport.Type
