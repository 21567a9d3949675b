/** Handlers of the jobs group: `GET /api/jobs?chatId=` (a chat's jobs, oldest first). */
import { Api } from "@switchboard/domain"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { JobsRepo } from "./JobsRepo.ts"

export const JobsHttp = HttpApiBuilder.group(Api, "jobs", Effect.fn(function*(handlers) {
  const repo = yield* JobsRepo
  return handlers.handle("list", ({ query }) => repo.list(query.chatId, { results: query.results !== "omit" }).pipe(Effect.map((jobs) => ({ jobs }))))
}))
