/**
 * The operator's routes (docs/planner.md, admin routes): hosts, tasks, provider
 * profiles and their credential key, the decision log and its retention
 * sweep. All behind `Authorization: Bearer $ADMIN_TOKEN`; a server without
 * ADMIN_TOKEN answers 401 to everyone. No answer ever holds a provider key.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, HttpApiSecurity, OpenApi } from "effect/http-api"
import { Schema } from "effect"
import { ChatId } from "./Chat.ts"
import { ChatList, ChatListQuery, UserId } from "./Users.ts"
import { RequestErrors } from "./ChatApi.ts"
import {
  anyRouteErrors,
  bodyErrors,
  ChatNotFound,
  CredentialUnavailable,
  DatabaseUnavailable,
  HostNotFound,
  HostRevoked,
  InvalidRequest,
  NotFound,
  ProfileNameTaken,
  ProfileNotFound,
  TaskNotFound,
  TaskTerminal,
  Unauthenticated
} from "./Errors.ts"
import {
  CreatedHost,
  CreatedProfile,
  CreatedTask,
  CreateHostRequest,
  CreateProfileRequest,
  CreateTaskRequest,
  DecisionList,
  DecisionsQuery,
  HostId,
  HostList,
  HostView,
  ProfileId,
  ProfileList,
  ProfileView,
  PruneReport,
  RotatedHostToken,
  RotationReport,
  TaskId,
  TaskList,
  TaskListQuery,
  TaskView
} from "./Planner.ts"
import { HostBudget, HostBudgetRequest, UsageQuery, UsageReport } from "./Usage.ts"

/** `Authorization: Bearer $ADMIN_TOKEN`; not `requiredForClient` (the client adds the header itself). */
const adminToken: HttpApiSecurity.Http = HttpApiSecurity.annotate(
  HttpApiSecurity.bearer,
  OpenApi.Description,
  "`Authorization: Bearer $ADMIN_TOKEN`, always required; a server without ADMIN_TOKEN refuses everyone"
)

export class AdminAuth extends HttpApiMiddleware.Service<AdminAuth>()("switchboard/domain/AdminAuth", {
  security: { adminToken },
  error: Unauthenticated
}) {}

const doc = (summary: string, description?: string) =>
  OpenApi.annotations(description === undefined ? { summary } : { summary, description })

export class AdminApi extends HttpApiGroup.make("admin")
  .add(
    HttpApiEndpoint.post("createHost", "/admin/hosts", {
      payload: CreateHostRequest,
      success: CreatedHost.pipe(HttpApiSchema.status(201)),
      error: [...anyRouteErrors, ...bodyErrors, DatabaseUnavailable]
    }).annotateMerge(doc(
      "Register a host",
      "Issues the host's bearer token (32 random bytes, base64url): shown in this answer only, stored as a hash."
    )),
    HttpApiEndpoint.get("listHosts", "/admin/hosts", {
      success: HostList,
      error: [...anyRouteErrors, DatabaseUnavailable]
    }).annotateMerge(doc(
      "The registered hosts, with their last heartbeat (never a token)",
      "Revoked hosts are listed too, with their `revokedAt`: their tasks and decisions keep naming them."
    )),
    HttpApiEndpoint.post("revokeHost", "/admin/hosts/:hostId/revoke", {
      params: { hostId: HostId },
      success: HostView,
      error: [...anyRouteErrors, InvalidRequest, NotFound, HostNotFound, DatabaseUnavailable]
    }).annotateMerge(doc(
      "Revoke a host",
      "Its token is refused (401) from the next request on, by every replica; the host row and its history stay, " +
        "with `revokedAt`. Its running task goes back to the queue as `attempt + 1` (the host's next call for it " +
        "is refused) and, like the tasks reserved for it, may be claimed by any host. Revoking a revoked host " +
        "changes nothing and answers it as it is."
    )),
    HttpApiEndpoint.post("rotateHostToken", "/admin/hosts/:hostId/rotate-token", {
      params: { hostId: HostId },
      success: RotatedHostToken,
      error: [...anyRouteErrors, InvalidRequest, NotFound, HostNotFound, HostRevoked, DatabaseUnavailable]
    }).annotateMerge(doc(
      "Issue a new token for a host",
      "The new token is shown in this answer only (stored as a hash); the old one is refused from the next " +
        "request on, by every replica. The host's tasks are untouched: restart its agent with the new token " +
        "before its lease runs out. 409 `host_revoked` for a revoked host."
    )),
    HttpApiEndpoint.post("createTask", "/admin/tasks", {
      payload: CreateTaskRequest,
      success: CreatedTask.pipe(HttpApiSchema.status(201)),
      error: [...anyRouteErrors, ...bodyErrors, HostNotFound, HostRevoked, DatabaseUnavailable]
    }).annotateMerge(doc(
      "Queue a task",
      "With `hostId` only that host may claim it; without, any host may, oldest first. 404 `host_not_found` " +
        "for an unknown `hostId`, 409 `host_revoked` for a revoked one."
    )),
    HttpApiEndpoint.get("listTasks", "/admin/tasks", {
      query: TaskListQuery,
      success: TaskList,
      error: [...anyRouteErrors, InvalidRequest, DatabaseUnavailable]
    }).annotateMerge(doc("Tasks, newest first", "Filtered by `status` and/or `hostId` when given.")),
    HttpApiEndpoint.get("getTask", "/admin/tasks/:taskId", {
      params: { taskId: TaskId },
      success: TaskView,
      error: [...anyRouteErrors, InvalidRequest, NotFound, TaskNotFound, DatabaseUnavailable]
    }).annotateMerge(doc("One task", "A running task whose lease expired shows as `queued` with the next attempt.")),
    HttpApiEndpoint.post("cancelTask", "/admin/tasks/:taskId/cancel", {
      params: { taskId: TaskId },
      success: TaskView,
      error: [...anyRouteErrors, InvalidRequest, NotFound, TaskNotFound, TaskTerminal, DatabaseUnavailable]
    }).annotateMerge(doc(
      "Cancel a task",
      "A queued or running task becomes terminal with status `cancelled` (answered as it is now); the host " +
        "running it gets 409 `task_cancelled` on its next lease renewal, result or planner decision, and stops. " +
        "Its decisions are kept for PLANNER_DECISION_RETENTION like any terminal task's. 409 `task_terminal` when " +
        "the task has already ended."
    )),
    HttpApiEndpoint.post("createProfile", "/admin/provider-profiles", {
      payload: CreateProfileRequest,
      success: CreatedProfile.pipe(HttpApiSchema.status(201)),
      error: [...anyRouteErrors, ...bodyErrors, ProfileNameTaken, CredentialUnavailable, DatabaseUnavailable]
    }).annotateMerge(doc(
      "Create a provider profile",
      "The API key is encrypted (AES-256-GCM under CREDENTIAL_KEY, the profile id as associated data) and never " +
        "shown again. 503 `credential_unavailable` when CREDENTIAL_KEY is missing or malformed. Not active until activated."
    )),
    HttpApiEndpoint.get("listProfiles", "/admin/provider-profiles", {
      success: ProfileList,
      error: [...anyRouteErrors, DatabaseUnavailable]
    }).annotateMerge(doc("The provider profiles (never a credential)")),
    HttpApiEndpoint.post("activateProfile", "/admin/provider-profiles/:profileId/activate", {
      params: { profileId: ProfileId },
      success: ProfileView,
      error: [...anyRouteErrors, InvalidRequest, NotFound, ProfileNotFound, DatabaseUnavailable]
    }).annotateMerge(doc(
      "Make a profile the active one",
      "Atomically: the previous active profile is deactivated in the same transaction. Every replica uses it " +
        "from its next planner request."
    )),
    HttpApiEndpoint.post("rotateCredentialKey", "/admin/provider-profiles/rotate-credential-key", {
      success: RotationReport,
      error: [...anyRouteErrors, CredentialUnavailable, DatabaseUnavailable]
    }).annotateMerge(doc(
      "Re-encrypt every profile under the current CREDENTIAL_KEY",
      "Values written under CREDENTIAL_KEY_PREVIOUS are decrypted with it and encrypted again under CREDENTIAL_KEY. " +
        "Once every profile's `credentialKeyId` is the answer's `keyId`, CREDENTIAL_KEY_PREVIOUS can be removed."
    )),
    HttpApiEndpoint.get("listDecisions", "/admin/planner-decisions", {
      query: DecisionsQuery,
      success: DecisionList,
      error: [...anyRouteErrors, InvalidRequest, DatabaseUnavailable]
    }).annotateMerge(doc(
      "A task's persisted planner decisions",
      "In order of attempt and step index; `attempt` narrows to one attempt. Screenshots are never stored. A page " +
        "holds at most `limit` decisions (default and most 1000) and ends before its prompts and arguments pass " +
        "16 MiB (one decision at least); `nextAfter`, when more follow, is the next page's `after`."
    )),
    HttpApiEndpoint.get("listChats", "/admin/chats", {
      query: { user: UserId, ...ChatListQuery },
      success: ChatList,
      error: [...anyRouteErrors, InvalidRequest, DatabaseUnavailable]
    }).annotateMerge(doc(
      "A user's chats",
      "The chats of `user` as that user's `GET /api/chats` lists them: most recently updated first, `limit` (default " +
        "50, at most 200) per page, `before` a page's `nextBefore`."
    )),
    HttpApiEndpoint.delete("deleteChat", "/admin/chats/:chatId", {
      params: { chatId: ChatId },
      query: { user: Schema.optionalKey(UserId) },
      success: HttpApiSchema.NoContent,
      error: [...anyRouteErrors, InvalidRequest, NotFound, ChatNotFound, DatabaseUnavailable]
    }).annotateMerge(doc(
      "Delete a chat",
      "The chat of `user` (default: the user `default`). Its transcript, its jobs and its markers (the turn in flight, the steers waiting to be delivered) are " +
        "deleted at once. A job running for it is abandoned: its runner, on any replica, finds it gone and writes " +
        "nothing, and no steer is ever delivered. A turn in flight stores nothing (its client still gets the " +
        "answer, with no job dispatched). The chat id may be used again: it starts a new, empty chat."
    )),
    HttpApiEndpoint.post("pruneDecisions", "/admin/planner-decisions/prune", {
      success: PruneReport,
      error: [...anyRouteErrors, DatabaseUnavailable]
    }).annotateMerge(doc(
      "Run the retention sweep now",
      "Deletes the decisions of tasks terminal for longer than PLANNER_DECISION_RETENTION (default 7 days), in " +
        "bounded batches; the same sweep runs periodically on every replica."
    )),
    HttpApiEndpoint.get("usage", "/admin/usage", {
      query: UsageQuery,
      success: UsageReport,
      error: [...anyRouteErrors, InvalidRequest, DatabaseUnavailable]
    }).annotateMerge(doc(
      "Token usage, totalled",
      "Every provider call that answered (chat turn, wake turn, sub-agent step, planner decision), counted per " +
        "hour against its kind, chat, job, host, task, provider profile and model, and kept as long as planner " +
        "decisions (PLANNER_DECISION_RETENTION). Grouped by `groupBy` (default `kind`) over [`from`, `to`) " +
        "(default: the last 24 hours; `from` rounded down to its hour), narrowed by `hostId`, `taskId`, `userId`, `chatId` " +
        "(`userId`'s chat of that id; without `userId`, the user `default`'s). " +
        "A replica adds its calls to the totals within about a second."
    )),
    HttpApiEndpoint.get("hostBudget", "/admin/hosts/:hostId/budget", {
      params: { hostId: HostId },
      success: HostBudget,
      error: [...anyRouteErrors, InvalidRequest, NotFound, HostNotFound, DatabaseUnavailable]
    }).annotateMerge(doc(
      "A host's budget of planner tokens, and what it used",
      "`usedTokens` counts input and output tokens over the window the budget is checked on: the current hour and " +
        "the 24 before it."
    )),
    HttpApiEndpoint.put("setHostBudget", "/admin/hosts/:hostId/budget", {
      params: { hostId: HostId },
      payload: HostBudgetRequest,
      success: HostBudget,
      error: [...anyRouteErrors, ...bodyErrors, NotFound, HostNotFound, DatabaseUnavailable]
    }).annotateMerge(doc(
      "Set a host's budget of planner tokens per 24 hours",
      "`dailyTokens: null` returns the host to the default (PLANNER_HOST_DAILY_TOKENS; unset: no budget). A " +
        "decision of a host whose tokens over the last 24 hours reached its budget is refused with 429 " +
        "`budget_exceeded` before any provider call, by every replica."
    ))
  )
  .middleware(AdminAuth)
  .middleware(RequestErrors)
  .annotateMerge(OpenApi.annotations({
    description: "The operator's routes: `Authorization: Bearer $ADMIN_TOKEN`, always required; a server started " +
      "without ADMIN_TOKEN answers 401 to every one of them."
  }))
{}
