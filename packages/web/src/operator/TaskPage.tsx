/**
 * One task (`/operator/tasks/:taskId`): its status, host, goal and output,
 * its attempts, and the planner decisions of each, step by step — the tool
 * and its arguments, the prompts folded (`<details>`). While the task is
 * queued or running the page asks again every 2 s (the task, and the
 * decisions after the last one shown: `DecisionLog.ts`), so a host agent's
 * decisions appear as it takes them; it stops once the task ended, and when
 * the page closes. A log longer than a page comes a page at a time, when the
 * operator asks. A queued or running task can be cancelled, after a
 * confirmation.
 */
import type { DecisionRecord, TaskView } from "@switchboard/domain"
import { isTerminal } from "@switchboard/domain"
import { useState } from "react"
import { useAdminApi } from "../api/ConsoleApi.ts"
import { Link } from "../app/Router.tsx"
import type { PageProps } from "../app/Router.tsx"
import { ConfirmDialog, FailureText, OperatorPage, Pending, pretty, Time, useLiveResult } from "./Common.tsx"
import { useDecisionLog } from "./DecisionLog.ts"
import { StatusBadge } from "./TasksPage.tsx"

/** How often a running task's page asks again. */
export const TASK_POLL_MS = 2_000

const Step = ({ decision }: { readonly decision: DecisionRecord }) => (
  <li className="step" aria-label={`Step ${decision.stepIndex}: ${decision.toolName}`}>
    <div className="step-head">
      <span className="step-index">Step {decision.stepIndex}</span>
      <code className="tool-name">{decision.toolName}</code>
      <Time iso={decision.createdAt} />
    </div>
    <pre tabIndex={0} className="arguments" aria-label={`Arguments of step ${decision.stepIndex}`}><code>{pretty(decision.arguments)}</code></pre>
    <details>
      <summary>Prompts<span className="visually-hidden"> of step {decision.stepIndex}</span></summary>
      <h4>System prompt</h4>
      <pre tabIndex={0} className="prompt">{decision.systemPrompt}</pre>
      <h4>User prompt</h4>
      <pre tabIndex={0} className="prompt">{decision.userPrompt}</pre>
    </details>
  </li>
)

const Attempt = ({ attempt, decisions, current, task, unread }: {
  readonly attempt: number
  readonly decisions: ReadonlyArray<DecisionRecord>
  readonly current: boolean
  /** Decisions after those shown are stored (the log is shown a page at a time, in attempt order). */
  readonly unread: boolean
  readonly task: TaskView
}) => (
  <section className="attempt" aria-labelledby={`attempt-${attempt}`}>
    <h3 id={`attempt-${attempt}`}>
      Attempt {attempt}
      {current ? <span className="muted"> (current{task.status === "running" ? ", running" : ""})</span> : null}
    </h3>
    {decisions.length === 0
      ? <p className="status">{unread ? "Its decisions come with the next pages." : `No decision${current && !isTerminal(task.status) ? " yet" : ""}.`}</p>
      : <ol className="steps">{decisions.map((d) => <Step key={`${d.attempt}-${d.stepIndex}`} decision={d} />)}</ol>}
  </section>
)

export default function TaskPage({ params }: PageProps) {
  const api = useAdminApi()
  const taskId = params.taskId ?? ""
  const [polling, setPolling] = useState(true)
  const result = useLiveResult(api, (client) => client.admin.getTask({ params: { taskId } }), [taskId], polling ? TASK_POLL_MS : undefined)
  const [cancelling, setCancelling] = useState(false)
  const task = result.value
  // Poll while it may still change; a failed refresh keeps trying (the server may be restarting).
  const shouldPoll = task === undefined ? result.failure === undefined : !isTerminal(task.status)
  if (shouldPoll !== polling) setPolling(shouldPoll)
  const log = useDecisionLog(api, taskId, polling, TASK_POLL_MS)
  const decisions = log.decisions ?? []
  const counted = log.more
    ? `More than ${decisions.length} decisions so far.`
    : `${decisions.length} decision${decisions.length === 1 ? "" : "s"} so far.`

  const attempts = task === undefined ? [] : Array.from({ length: task.attempt }, (_, i) => task.attempt - i)

  return (
    <OperatorPage title={task === undefined ? "Task" : `Task: ${task.goal}`}>
      <p><Link to="/operator/tasks">← All tasks</Link></p>
      <Pending result={result} what="task" />
      {task === undefined ? null : (
        <>
          <dl className="facts">
            <div><dt>Status</dt><dd><StatusBadge status={task.status} /></dd></div>
            <div><dt>Task id</dt><dd><code>{task.taskId}</code></dd></div>
            <div>
              <dt>Host</dt>
              <dd>
                {task.hostId === null
                  ? <span className="muted">any host</span>
                  : <Link to={`/operator/tasks?hostId=${encodeURIComponent(task.hostId)}`}><code>{task.hostId}</code></Link>}
              </dd>
            </div>
            <div><dt>Attempt</dt><dd>{task.attempt}</dd></div>
            <div><dt>Created</dt><dd><Time iso={task.createdAt} /></dd></div>
            {task.leaseExpiresAt === undefined ? null : <div><dt>Lease until</dt><dd><Time iso={task.leaseExpiresAt} /></dd></div>}
            {task.terminalAt === undefined ? null : <div><dt>Ended</dt><dd><Time iso={task.terminalAt} /></dd></div>}
          </dl>
          <p className="status" role="status">
            {isTerminal(task.status)
              ? `The task ended (${task.status}).`
              : `Following the task: refreshed every ${TASK_POLL_MS / 1000} s while it is ${task.status}. ${counted}`}
          </p>
          {isTerminal(task.status) ? null : (
            <p>
              <button type="button" className="danger" onClick={() => setCancelling(true)}>Cancel task</button>
            </p>
          )}
          {task.output === undefined ? null : (
            <section aria-labelledby="task-output">
              <h2 id="task-output">Output</h2>
              <pre tabIndex={0} className="arguments"><code>{pretty(task.output)}</code></pre>
            </section>
          )}
          <section aria-labelledby="task-decisions">
            <h2 id="task-decisions">Planner decisions</h2>
            {log.decisions === undefined ? null : attempts.map((attempt) => (
              <Attempt
                key={attempt}
                attempt={attempt}
                current={attempt === task.attempt}
                unread={log.more && (decisions.at(-1)?.attempt ?? 0) < attempt}
                task={task}
                decisions={decisions.filter((d) => d.attempt === attempt)}
              />
            ))}
            {log.decisions === undefined && log.failure === undefined ? <p className="status" role="status">Loading the decisions…</p> : null}
            {log.more
              ? (
                <>
                  <p className="status">
                    The first {decisions.length} decisions are shown. All of them in a terminal:{" "}
                    <code>switchboard admin decisions {task.taskId}</code>
                  </p>
                  <p>
                    <button type="button" onClick={log.showMore} disabled={log.loading}>
                      {log.loading ? "Loading…" : "Show more decisions"}
                    </button>
                  </p>
                </>
              )
              : null}
            <FailureText failure={log.failure} prefix="Could not load the decisions" />
          </section>
        </>
      )}
      {task !== undefined ? <FailureText failure={result.failure} prefix="Could not refresh the task" /> : null}

      <ConfirmDialog
        open={cancelling}
        title="Cancel this task?"
        confirmLabel="Cancel task"
        dismissLabel="Keep it"
        onClose={() => setCancelling(false)}
        onConfirm={async () => {
          await api.run(api.client.admin.cancelTask({ params: { taskId } }))
          result.reload()
        }}
      >
        <p>The host running it stops at its next step. Its decisions are kept like any finished task's.</p>
      </ConfirmDialog>
    </OperatorPage>
  )
}
