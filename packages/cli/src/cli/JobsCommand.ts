/**
 * `switchboard jobs [--chat ID]`: the sub-agent jobs of a chat (default: the
 * conversation `switchboard chat` continues), oldest first — one line each:
 * id, kind, status, and the live activity line while it runs.
 */
import type { ChatId } from "@switchboard/domain"
import { Console, Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { allPages, ApiClient, describeApiFailure, makeChatStore } from "@switchboard/client"
import { fileStorage, stateDirectory } from "../stores/FileStorage.ts"
import { apiOptions, failureLine, tokenFlag, userFlag } from "./CredentialFlags.ts"
import { serverFlag } from "./ServerFlag.ts"
import { failWith } from "./CliFailure.ts"

export const jobsCommand = Command.make("jobs", {
  chat: Flag.String("chat").pipe(
    Flag.withDescription("The chat id (default: the current conversation of `switchboard chat`)"),
    Flag.withMetavar("ID"),
    Flag.optional
  ),
  server: serverFlag,
  token: tokenFlag,
  user: userFlag
}, ({ chat, server, token, user }) =>
  Effect.gen(function*() {
    const chatId: ChatId = Option.getOrElse(chat, () => makeChatStore(fileStorage(stateDirectory())).getState().chatId)
    const client = yield* ApiClient
    const jobs = yield* allPages((cursor) => client.jobs.list({ query: { chatId, ...cursor } }), (page) => page.jobs).pipe(
      Effect.catch((error) =>
        describeApiFailure(error).pipe(
          Effect.flatMap((failure) => failWith(failureLine(failure, token)))
        )
      )
    )
    if (jobs.length === 0) return yield* Console.log(`No jobs in chat ${chatId}.`)
    for (const job of jobs) {
      const activity = job.status === "running" && job.activity !== "" ? `  ${job.activity}` : ""
      const error = job.error !== undefined ? `  (${job.error})` : ""
      yield* Console.log(`${job.id}  ${job.kind.padEnd(8)}  ${job.status.padEnd(7)}  ${job.createdAt}${activity}${error}`)
    }
  }).pipe(Effect.provide(ApiClient.layer(apiOptions({ server, token, user }))))).pipe(
    Command.withDescription("List the sub-agent jobs of a chat (default: the current conversation), oldest first."),
    Command.withShortDescription("List a chat's sub-agent jobs")
  )
