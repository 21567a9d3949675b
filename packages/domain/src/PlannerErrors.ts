/**
 * The errors of the planner proxy and the host control plane (docs/planner.md); the table of codes
 * is `ErrorCodes.ts`, every declared error listed in `Errors.ts` (`declaredErrors`).
 */
import { Schema } from "effect"
import { ProviderFailureReason, statusOfCode } from "./ErrorCodes.ts"

// ---------------------------------------------------------------------------
// Planner proxy and host control plane (docs/planner.md)

/** A host token of another host than the one the request names, or a task not assigned to that host. */
export class Forbidden extends Schema.Error<Forbidden>("Forbidden")({
  error: Schema.String,
  code: Schema.tag("forbidden")
}, { httpApiStatus: statusOfCode.forbidden }) {
  get _tag() {
    return "Forbidden" as const
  }
}

export class HostNotFound extends Schema.Error<HostNotFound>("HostNotFound")({
  error: Schema.String,
  code: Schema.tag("host_not_found"),
  hostId: Schema.String
}, { httpApiStatus: statusOfCode.host_not_found }) {
  get _tag() {
    return "HostNotFound" as const
  }
}

export class TaskNotFound extends Schema.Error<TaskNotFound>("TaskNotFound")({
  error: Schema.String,
  code: Schema.tag("task_not_found"),
  taskId: Schema.String
}, { httpApiStatus: statusOfCode.task_not_found }) {
  get _tag() {
    return "TaskNotFound" as const
  }
}

export class ProfileNotFound extends Schema.Error<ProfileNotFound>("ProfileNotFound")({
  error: Schema.String,
  code: Schema.tag("profile_not_found"),
  profileId: Schema.String
}, { httpApiStatus: statusOfCode.profile_not_found }) {
  get _tag() {
    return "ProfileNotFound" as const
  }
}

/** A provider profile name already taken. */
export class ProfileNameTaken extends Schema.Error<ProfileNameTaken>("ProfileNameTaken")({
  error: Schema.String,
  code: Schema.tag("profile_name_taken"),
  name: Schema.String
}, { httpApiStatus: statusOfCode.profile_name_taken }) {
  get _tag() {
    return "ProfileNameTaken" as const
  }
}

/** The lease expired, or the attempt named is not the task's current one (the task was claimed again). */
export class LeaseLost extends Schema.Error<LeaseLost>("LeaseLost")({
  error: Schema.String,
  code: Schema.tag("lease_lost"),
  taskId: Schema.String
}, { httpApiStatus: statusOfCode.lease_lost }) {
  get _tag() {
    return "LeaseLost" as const
  }
}

/** The operator cancelled the task: the host must stop working on it (and report nothing). */
export class TaskCancelled extends Schema.Error<TaskCancelled>("TaskCancelled")({
  error: Schema.String,
  code: Schema.tag("task_cancelled"),
  taskId: Schema.String
}, { httpApiStatus: statusOfCode.task_cancelled, description: "The operator cancelled the task: stop working on it" }) {
  get _tag() {
    return "TaskCancelled" as const
  }
}

/** The attempt took `PLANNER_MAX_STEPS` decisions: no more for it (the host reports the task failed). */
export class StepLimit extends Schema.Error<StepLimit>("StepLimit")({
  error: Schema.String,
  code: Schema.tag("step_limit"),
  taskId: Schema.String,
  limit: Schema.Int
}, {
  httpApiStatus: statusOfCode.step_limit,
  description: "The attempt has taken `PLANNER_MAX_STEPS` decisions (`limit`): no more are made for it; report the task's result"
}) {
  get _tag() {
    return "StepLimit" as const
  }
}

/** A cancel of a task that has already ended (succeeded, failed or cancelled). */
export class TaskTerminal extends Schema.Error<TaskTerminal>("TaskTerminal")({
  error: Schema.String,
  code: Schema.tag("task_terminal"),
  taskId: Schema.String,
  status: Schema.String
}, { httpApiStatus: statusOfCode.task_terminal, description: "The task has already ended; `status` says how" }) {
  get _tag() {
    return "TaskTerminal" as const
  }
}

/** The host was revoked: its token cannot be rotated (register a new host instead). */
export class HostRevoked extends Schema.Error<HostRevoked>("HostRevoked")({
  error: Schema.String,
  code: Schema.tag("host_revoked"),
  hostId: Schema.String
}, { httpApiStatus: statusOfCode.host_revoked, description: "The host was revoked; register a new one" }) {
  get _tag() {
    return "HostRevoked" as const
  }
}

export class NoActiveProfile extends Schema.Error<NoActiveProfile>("NoActiveProfile")({
  error: Schema.String,
  code: Schema.tag("no_active_profile")
}, { httpApiStatus: statusOfCode.no_active_profile }) {
  get _tag() {
    return "NoActiveProfile" as const
  }
}

/**
 * CREDENTIAL_KEY is missing or malformed, or a stored credential was written
 * under a key the server does not hold. `error` names the variable to fix.
 */
export class CredentialUnavailable extends Schema.Error<CredentialUnavailable>("CredentialUnavailable")({
  error: Schema.String,
  code: Schema.tag("credential_unavailable")
}, { httpApiStatus: statusOfCode.credential_unavailable }) {
  get _tag() {
    return "CredentialUnavailable" as const
  }
}

/** The planner's provider call failed (unreachable, an error status, an unreadable answer). */
export class PlannerProviderError extends Schema.Error<PlannerProviderError>("PlannerProviderError")({
  error: Schema.String,
  code: Schema.tag("provider_error"),
  /** Always sent by this server; optional so that a client still reads an older server's answer. */
  reason: Schema.optionalKey(ProviderFailureReason)
}, { httpApiStatus: statusOfCode.provider_error, description: "The provider call failed (unreachable, an error status, an unreadable or too large answer); `reason` says how" }) {
  get _tag() {
    return "PlannerProviderError" as const
  }
}

/** The provider answered without a tool call. */
export class NoToolCall extends Schema.Error<NoToolCall>("NoToolCall")({
  error: Schema.String,
  code: Schema.tag("no_tool_call")
}, { httpApiStatus: statusOfCode.no_tool_call }) {
  get _tag() {
    return "NoToolCall" as const
  }
}

/** The provider answered with more than one tool call. */
export class MultipleToolCalls extends Schema.Error<MultipleToolCalls>("MultipleToolCalls")({
  error: Schema.String,
  code: Schema.tag("multiple_tool_calls")
}, { httpApiStatus: statusOfCode.multiple_tool_calls }) {
  get _tag() {
    return "MultipleToolCalls" as const
  }
}

/** One tool call, but its name is not one of the request's tools, or its arguments are not a JSON object. */
export class InvalidToolCall extends Schema.Error<InvalidToolCall>("InvalidToolCall")({
  error: Schema.String,
  code: Schema.tag("invalid_tool_call")
}, { httpApiStatus: statusOfCode.invalid_tool_call }) {
  get _tag() {
    return "InvalidToolCall" as const
  }
}

/** No answer within the active profile's timeout. */
export class ProviderTimeout extends Schema.Error<ProviderTimeout>("ProviderTimeout")({
  error: Schema.String,
  code: Schema.tag("provider_timeout")
}, { httpApiStatus: statusOfCode.provider_timeout }) {
  get _tag() {
    return "ProviderTimeout" as const
  }
}
