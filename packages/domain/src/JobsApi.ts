/**
 * The sub-agent jobs route (docs/jobs.md): the one poll that
 * drives every client's job surfaces (dispatch cards with live activity, the
 * re-sync when a job settles).
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { ChatId } from "./Chat.ts"
import { ChatAuth, chatAuthRule, RequestErrors } from "./ChatApi.ts"
import { anyRouteErrors, DatabaseUnavailable, InvalidRequest } from "./Errors.ts"
import { JobCursor, JobIdList, JobList, JOBS_IDS_MAX, JOBS_PAGE_MAX } from "./Jobs.ts"

/**
 * `GET /api/jobs`'s query. `results=omit` leaves every record's `result` out (a demo's page is up
 * to a MiB): what a poll asks while it already holds the results of the jobs it saw settle.
 */
export const JobListQuery = {
  chatId: ChatId,
  results: Schema.optionalKey(Schema.Literals(["include", "omit"])),
  /** At most this many jobs (default and most 1,000). */
  limit: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: JOBS_PAGE_MAX }))),
  /** The jobs after this page (its `nextAfter`). */
  after: Schema.optionalKey(JobCursor),
  /** Only these of the chat's jobs (comma-separated, at most 100); ids the chat has not are left out. */
  ids: Schema.optionalKey(JobIdList)
}

export class JobsApi extends HttpApiGroup.make("jobs")
  .add(
    HttpApiEndpoint.get("list", "/api/jobs", {
      query: JobListQuery,
      success: JobList,
      error: [...anyRouteErrors, InvalidRequest, DatabaseUnavailable]
    }).annotateMerge(OpenApi.annotations({
      summary: "The sub-agent jobs of a chat",
      description: "Every job the chat's turns dispatched, oldest first, with its live `activity` line. A job's " +
        "`status` turns `done` or `error` (and its `result` appears) only after its steer was delivered and the " +
        "wake turn answered it: a client that sees the flip re-syncs the transcript once. A chat without jobs " +
        "(or unknown) has an empty list. 400 without a valid `chatId`. With `results=omit`, no record carries its " +
        "`result` (the rest is the same): a poll that already holds the results of the jobs it saw settle asks so. " +
        "A page holds at most `limit` jobs (default and most 1000) and ends before its results pass 16 MiB (one job " +
        "at least); `nextAfter`, when more follow, is the next page's `after`. With `ids` (comma-separated, at most " +
        `${JOBS_IDS_MAX}), only those of the chat's jobs: a poll that saw jobs settle asks for their results alone.`
    }))
  )
  .middleware(ChatAuth)
  .middleware(RequestErrors)
  .annotateMerge(OpenApi.annotations({
    description: "Sub-agent jobs (ack now, steer later): the jobs a chat's turns dispatched. " + chatAuthRule
  }))
{}
