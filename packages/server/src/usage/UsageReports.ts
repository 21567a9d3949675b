/**
 * `GET /admin/usage` (docs/usage.md): the query's defaults and bounds, and
 * this replica's counts flushed first, so what it just served is in the
 * answer (other replicas' within about a second).
 */
import type { UsageGroupBy, UsageReport } from "@switchboard/domain"
import { DEFAULT_USER, InvalidRequest } from "@switchboard/domain"
import { chatKey } from "../users/ChatKey.ts"
import { Clock, Context, Effect, Layer } from "effect"
import { UsageLedger } from "./UsageLedger.ts"
import { hourOf, UsageRepo } from "./UsageRepo.ts"

/** Rows an answer holds at most (`truncated` says when there were more). */
export const MAX_USAGE_ROWS = 1000

const DAY_MS = 86_400_000

export interface UsageRequest {
  readonly from?: string | undefined
  readonly to?: string | undefined
  readonly groupBy?: UsageGroupBy | undefined
  readonly hostId?: string | undefined
  readonly taskId?: string | undefined
  readonly chatId?: string | undefined
  readonly userId?: string | undefined
}

export class UsageReports extends Context.Service<UsageReports, {
  report(request: UsageRequest): Effect.Effect<UsageReport, InvalidRequest>
}>()("switchboard/server/usage/UsageReports") {
  static readonly layer = Layer.effect(UsageReports, Effect.gen(function*() {
    const repo = yield* UsageRepo
    const ledger = yield* UsageLedger
    return UsageReports.of({
      report: Effect.fnUntraced(function*(request) {
        const now = yield* Clock.currentTimeMillis
        const toMs = request.to === undefined ? now : Date.parse(request.to)
        const fromMs = request.from === undefined ? toMs - DAY_MS : Date.parse(request.from)
        const fromHour = hourOf(fromMs)
        if (fromHour >= toMs) {
          return yield* new InvalidRequest({ error: "Invalid request: from must be before to (from is rounded down to its hour)" })
        }
        const groupBy = request.groupBy ?? "kind"
        yield* ledger.flush
        const rows = yield* repo.report({
          fromHour,
          toMs,
          groupBy,
          hostId: request.hostId,
          taskId: request.taskId,
          // A chat is its user's (the user `default`'s without `userId`), as the admin chat routes name it.
          chatId: request.chatId === undefined ? undefined : chatKey(request.userId ?? DEFAULT_USER, request.chatId),
          userId: request.userId,
          limit: MAX_USAGE_ROWS + 1
        })
        return {
          rows: rows.slice(0, MAX_USAGE_ROWS),
          from: new Date(fromHour).toISOString(),
          to: new Date(toMs).toISOString(),
          groupBy,
          truncated: rows.length > MAX_USAGE_ROWS
        }
      })
    })
  }))
}
