/**
 * The sub-agent jobs route (docs/jobs.md): the one poll that
 * drives every client's job surfaces (dispatch cards with live activity, the
 * re-sync when a job settles).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { ChatId } from "./Chat.ts"
import { ChatAuth, chatAuthRule, RequestErrors } from "./ChatApi.ts"
import { anyRouteErrors, DatabaseUnavailable, InvalidRequest } from "./Errors.ts"
import { JobList } from "./Jobs.ts"

export class JobsApi extends HttpApiGroup.make("jobs")
  .add(
    HttpApiEndpoint.get("list", "/api/jobs", {
      query: { chatId: ChatId },
      success: JobList,
      error: [...anyRouteErrors, InvalidRequest, DatabaseUnavailable]
    }).annotateMerge(OpenApi.annotations({
      summary: "The sub-agent jobs of a chat",
      description: "Every job the chat's turns dispatched, oldest first, with its live `activity` line. A job's " +
        "`status` turns `done` or `error` (and its `result` appears) only after its steer was delivered and the " +
        "wake turn answered it: a client that sees the flip re-syncs the transcript once. A chat without jobs " +
        "(or unknown) has an empty list. 400 without a valid `chatId`."
    }))
  )
  .middleware(ChatAuth)
  .middleware(RequestErrors)
  .annotateMerge(OpenApi.annotations({
    description: "Sub-agent jobs (ack now, steer later): the jobs a chat's turns dispatched. " + chatAuthRule
  }))
{}
