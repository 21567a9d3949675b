/** Handlers of the jobs group: `GET /api/jobs?chatId=` (a chat's jobs, oldest first). */
import { Api, CurrentUser } from "@switchboard/domain"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { chatKey } from "../users/ChatKey.ts"
import { JobsRepo } from "./JobsRepo.ts"

export const JobsHttp = HttpApiBuilder.group(Api, "jobs", Effect.fn(function*(handlers) {
  const repo = yield* JobsRepo
  // The caller's chat only: another user's chat of that id has no jobs here.
  return handlers.handle("list", ({ query }) =>
    CurrentUser.pipe(
      Effect.flatMap(({ userId }) =>
        repo.list(chatKey(userId, query.chatId), {
          results: query.results !== "omit",
          limit: query.limit,
          after: query.after,
          ids: query.ids === undefined ? undefined : [...new Set(query.ids.split(","))]
        })
      )
    ))
}))
