/**
 * The operator's token usage (`/operator/usage?groupBy=…&window=…&userId=…`):
 * every provider call that answered — chat and wake turns, sub-agent steps,
 * planner decisions — totalled per kind, host, task, chat, model or user (the
 * end user a chat, wake turn or job was for, docs/users.md) over the last day
 * or week (`GET /admin/usage`, docs/usage.md). The grouping, the window and a
 * user to narrow to live in the URL, so a view is a link; a host, task or
 * the default user's chat links to its page, a user to that user's chats'
 * usage. Refreshed every 15 s.
 */
import type { UsageGroupBy, UsageRow } from "@switchboard/domain"
import { useId } from "react"
import { useAdminApi } from "../api/ConsoleApi.ts"
import { Link, navigate, useLocation } from "../app/Router.tsx"
import type { PageProps } from "../app/Router.tsx"
import { FailureText, OperatorPage, Pending, TableRegion, Time, useLiveResult } from "./Common.tsx"

const GROUPS: ReadonlyArray<readonly [UsageGroupBy, string]> = [
  ["kind", "Kind"],
  ["host", "Host"],
  ["task", "Task"],
  ["chat", "Chat"],
  ["model", "Model"],
  ["user", "User"]
]

const PERIODS = { day: ["Last 24 hours", 86_400_000], week: ["Last 7 days", 7 * 86_400_000] } as const
type Period = keyof typeof PERIODS

const KIND_LABELS: Record<string, string> = {
  chat: "chat turns",
  wake: "wake turns (steers answered)",
  job: "sub-agent steps",
  planner: "planner decisions"
}

const isGroup = (value: string | null): value is UsageGroupBy => GROUPS.some(([group]) => group === value)

const count = (n: number) => n.toLocaleString()

/** The row's key as a link to what it names, where the console has a page for it. */
const KeyCell = ({ groupBy, row, hostName, userId }: {
  readonly groupBy: UsageGroupBy
  readonly row: UsageRow
  readonly hostName: ReadonlyMap<string, string>
  /** The user the view is narrowed to, if any. */
  readonly userId: string | undefined
}) => {
  switch (groupBy) {
    case "host":
      return <Link to={`/operator/tasks?hostId=${encodeURIComponent(row.key)}`}>{hostName.get(row.key) ?? row.key}</Link>
    case "task":
      return <Link to={`/operator/tasks/${encodeURIComponent(row.key)}`}><code>{row.key}</code></Link>
    case "chat": {
      // A chat of a user other than `default` is keyed `<user>/<chatId>` (docs/users.md): the
      // console's chat page opens its own user's chats only, so no link.
      const slash = row.key.indexOf("/")
      if (slash < 0) return <Link to={`/chats/${encodeURIComponent(row.key)}`}><code>{row.key}</code></Link>
      const user = row.key.slice(0, slash)
      return user === userId ? <code>{row.key.slice(slash + 1)}</code> : <code>{row.key}</code>
    }
    case "kind":
      return <>{row.key} <span className="muted">{KIND_LABELS[row.key] ?? ""}</span></>
    case "model":
      return <code>{row.key}</code>
    case "user":
      return (
        <Link to={`/operator/usage?groupBy=chat&userId=${encodeURIComponent(row.key)}`} title={`Usage of ${row.key}'s chats`}>
          <code>{row.key}</code>
        </Link>
      )
  }
}

export default function UsagePage(_props: PageProps) {
  const api = useAdminApi()
  const { search } = useLocation()
  const id = useId()
  const groupBy: UsageGroupBy = isGroup(search.get("groupBy")) ? (search.get("groupBy") as UsageGroupBy) : "kind"
  const period: Period = search.get("window") === "week" ? "week" : "day"
  const userId = search.get("userId")?.trim() || undefined
  // The window ends now at every refresh: a page left open shows the last 24 hours, not everything
  // since it was opened.
  const usage = useLiveResult(
    api,
    (client) =>
      client.admin.usage({
        query: {
          groupBy,
          from: new Date(Date.now() - PERIODS[period][1]).toISOString(),
          ...(userId === undefined ? {} : { userId })
        }
      }),
    [groupBy, period, userId],
    15_000
  )
  const hosts = useLiveResult(api, (client) => client.admin.listHosts(), [])
  const hostName = new Map((hosts.value?.hosts ?? []).map((host) => [host.hostId, host.name]))

  const choose = (next: { readonly groupBy?: string; readonly window?: string; readonly userId?: string | null }) => {
    const params = new URLSearchParams()
    const g = next.groupBy ?? groupBy
    const w = next.window ?? period
    const u = next.userId === undefined ? userId : next.userId ?? undefined
    if (g !== "kind") params.set("groupBy", g)
    if (w !== "day") params.set("window", w)
    if (u !== undefined) params.set("userId", u)
    const query = params.toString()
    navigate(`/operator/usage${query === "" ? "" : `?${query}`}`, { replace: true })
  }

  const report = usage.value
  const total = (report?.rows ?? []).reduce(
    (sum, row) => ({ calls: sum.calls + row.calls, input: sum.input + row.inputTokens, output: sum.output + row.outputTokens }),
    { calls: 0, input: 0, output: 0 }
  )

  return (
    <OperatorPage
      title="Usage"
      intro={
        <>
          Tokens of every provider call that answered, counted per hour by every replica. A host's daily budget of
          planner tokens is set on the <Link to="/operator/hosts">Hosts</Link> page.
        </>
      }
    >
      <form className="filters" role="search" aria-labelledby={`${id}-filters`} onSubmit={(event) => event.preventDefault()}>
        <h2 id={`${id}-filters`}>View</h2>
        <div className="field">
          <label htmlFor={`${id}-group`}>Per</label>
          <select id={`${id}-group`} value={groupBy} onChange={(event) => choose({ groupBy: event.target.value })}>
            {GROUPS.map(([group, label]) => <option key={group} value={group}>{label}</option>)}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${id}-window`}>Over</label>
          <select id={`${id}-window`} value={period} onChange={(event) => choose({ window: event.target.value })}>
            {Object.entries(PERIODS).map(([key, [label]]) => <option key={key} value={key}>{label}</option>)}
          </select>
        </div>
        {userId === undefined ? null : (
          <div className="field">
            <span className="filter-chip">
              User <code>{userId}</code>
            </span>
            <button type="button" className="secondary" onClick={() => choose({ userId: null })}>
              All users
            </button>
          </div>
        )}
      </form>

      <Pending result={usage} what="usage" />
      {report === undefined ? null : report.rows.length === 0
        ? (
          <p className="status">
            No provider calls {groupBy === "kind" || groupBy === "model" ? "" : `with a ${groupBy} `}
            {userId === undefined ? "" : `of ${userId} `}in this window.
          </p>
        )
        : (
          <TableRegion
            label={`Per ${groupBy}${userId === undefined ? "" : ` of user ${userId}`}, most tokens first: ${count(total.calls)} calls, ${
              count(total.input)
            } tokens in, ${count(total.output)} out`}
          >
            <thead>
              <tr>
                <th scope="col">{GROUPS.find(([group]) => group === groupBy)?.[1]}</th>
                <th scope="col" className="number">Calls</th>
                <th scope="col" className="number">Input tokens</th>
                <th scope="col" className="number">of them cached</th>
                <th scope="col" className="number">Output tokens</th>
              </tr>
            </thead>
            <tbody>
              {report.rows.map((row) => (
                <tr key={row.key}>
                  <th scope="row"><KeyCell groupBy={groupBy} row={row} hostName={hostName} userId={userId} /></th>
                  <td className="number">{count(row.calls)}</td>
                  <td className="number">{count(row.inputTokens)}</td>
                  <td className="number">{count(row.cachedInputTokens)}</td>
                  <td className="number">{count(row.outputTokens)}</td>
                </tr>
              ))}
            </tbody>
          </TableRegion>
        )}
      {report === undefined ? null : (
        <p className="muted">
          From <Time iso={report.from} /> to <Time iso={report.to} />
          {report.truncated ? `; the first ${report.rows.length} rows` : ""}.
        </p>
      )}
      {usage.value !== undefined ? <FailureText failure={usage.failure} prefix="Could not refresh the usage" /> : null}
    </OperatorPage>
  )
}
