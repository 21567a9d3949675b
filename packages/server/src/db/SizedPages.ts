/**
 * Listings answered a page at a time (a task's decisions, a chat's jobs), bounded twice: a page
 * holds at most `limit` rows, and ends before the stored values it carries (results, prompts,
 * arguments) pass {@link PAGE_BYTES} — one row at least. A listing's statement sizes its rows first
 * (`own`: a row's bytes), one more than `limit` so that it knows whether more follow, adds
 * {@link pageSums} over them, keeps the rows {@link inPage}, and reads only those whole; then
 * {@link pageOf} cuts the answer and names the next page.
 */
import type { SqlClient, Statement } from "effect/sql"

/** The most bytes of stored values one page holds (a row holds a few of `maxStoredValueBytes` at most). */
export const PAGE_BYTES = 16 * 1024 * 1024

/** The running size (`upto`) in the listing's `order`, and how many rows were sized (`fetched`). */
export const pageSums = (sql: SqlClient.SqlClient, order: Statement.Fragment) =>
  sql`sum(own) OVER (ORDER BY ${order}) AS upto, count(*) OVER () AS fetched`

/** Whether the sized row `alias` is in the page: within PAGE_BYTES, or the first whatever its size. */
export const inPage = (sql: SqlClient.SqlClient, alias: string) =>
  sql`(${sql(alias)}.upto <= ${PAGE_BYTES} OR ${sql(alias)}.upto = ${sql(alias)}.own)`

/** The rows the page answers, and the cursor of the next page when more follow (`cursor` of the last row). */
export const pageOf = <R extends { readonly fetched: number | string }>(
  rows: ReadonlyArray<R>,
  limit: number,
  cursor: (row: R) => string
): { readonly kept: ReadonlyArray<R>; readonly nextAfter: string | undefined } => {
  const kept = rows.slice(0, limit)
  const last = kept.at(-1)
  return { kept, nextAfter: last !== undefined && Number(rows[0]!.fetched) > kept.length ? cursor(last) : undefined }
}
