/**
 * `switchboard admin usage`: token usage of every provider call that answered, totalled per host,
 * task, chat, user, model or kind over a window (docs/usage.md).
 */
import { UsageGroupBy } from "@switchboard/domain"
import { Console, Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { hostIdFlag, jsonFlag, printJson, withAdmin } from "./AdminClient.ts"

export const usage = Command.make("usage", {
  groupBy: Flag.Literals("group-by", UsageGroupBy.literals).pipe(
    Flag.withDescription("Totals per host, task, chat, user, model or kind (default kind)"),
    Flag.optional
  ),
  from: Flag.String("from").pipe(Flag.withDescription("From this time, ISO-8601 (default: 24 hours before --to)"), Flag.optional),
  to: Flag.String("to").pipe(Flag.withDescription("Until this time, ISO-8601 (default: now)"), Flag.optional),
  hostId: hostIdFlag("Only this host's calls"),
  taskId: Flag.String("task-id").pipe(Flag.withDescription("Only this task's calls"), Flag.optional),
  chatId: Flag.String("chat-id").pipe(Flag.withDescription("Only this chat's calls (its turns, jobs and wakes)"), Flag.optional),
  user: Flag.String("user").pipe(Flag.withDescription("Only this user's calls (their turns, wakes and jobs)"), Flag.optional),
  json: jsonFlag
}, ({ chatId, from, groupBy, hostId, json, taskId, to, user }) =>
  withAdmin((client) =>
    Effect.gen(function*() {
      const optional = <K extends string>(key: K, value: Option.Option<string>) =>
        Option.isSome(value) ? { [key]: value.value } as Record<K, string> : {}
      const report = yield* client.admin.usage({
        query: {
          ...(Option.isSome(groupBy) ? { groupBy: groupBy.value } : {}),
          ...optional("from", from),
          ...optional("to", to),
          ...optional("hostId", hostId),
          ...optional("taskId", taskId),
          ...optional("chatId", chatId),
          ...optional("userId", user)
        }
      })
      if (json) return yield* printJson(report)
      yield* Console.log(`${report.from} to ${report.to}, by ${report.groupBy}`)
      if (report.rows.length === 0) return yield* Console.log("no provider calls")
      for (const row of report.rows) {
        yield* Console.log(
          `${row.key}  ${row.calls} calls  ${row.inputTokens} in (${row.cachedInputTokens} cached)  ${row.outputTokens} out`
        )
      }
      if (report.truncated) yield* Console.log(`(the first ${report.rows.length} rows, most tokens first)`)
    })
  )).pipe(
    Command.withDescription(
      "Token usage of every provider call that answered (chat and wake turns, sub-agent steps, planner decisions), " +
        "totalled per host, task, chat, model or kind over a window (default: the last 24 hours)."
    )
  )
