/**
 * The operator's tasks (`/operator/tasks?status=…&hostId=…`): the tasks,
 * newest first, filtered by status and host (the filters live in the URL, so
 * a filtered list is a link), a form that queues a task (for any host, or
 * one), and each task's link to its page. Refreshed every 5 s while a listed
 * task is queued or running.
 */
import type { TaskStatus, TaskView } from "@switchboard/domain"
import { isTerminal } from "@switchboard/domain"
import type { FormEvent } from "react"
import { useId, useRef, useState } from "react"
import { useAdminApi } from "../api/ConsoleApi.ts"
import { Link, navigate, useLocation } from "../app/Router.tsx"
import type { PageProps } from "../app/Router.tsx"
import { FailureText, OperatorPage, Pending, TableRegion, Time, useAction, useLiveResult } from "./Common.tsx"

export const STATUSES: ReadonlyArray<TaskStatus> = ["queued", "running", "succeeded", "failed", "cancelled"]

const isStatus = (value: string | null): value is TaskStatus => STATUSES.includes(value as TaskStatus)

export const StatusBadge = ({ status }: { readonly status: TaskStatus }) => (
  <span className={`badge badge-${status}`}>{status}</span>
)

const CreateTask = ({ hosts, onCreated }: {
  readonly hosts: ReadonlyArray<{ readonly hostId: string; readonly name: string }>
  readonly onCreated: (taskId: string) => void
}) => {
  const api = useAdminApi()
  const id = useId()
  const form = useRef<HTMLFormElement>(null)
  const goal = useRef<HTMLTextAreaElement>(null)
  const { act, busy, failure, setFailure } = useAction()
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const data = new FormData(event.currentTarget)
    const text = String(data.get("goal") ?? "").trim()
    const hostId = String(data.get("hostId") ?? "")
    if (text === "") {
      setFailure({ message: "Enter the task's goal." })
      goal.current?.focus()
      return
    }
    await act(async () => {
      const created = await api.run(api.client.admin.createTask({ payload: hostId === "" ? { goal: text } : { goal: text, hostId } }))
      form.current?.reset()
      onCreated(created.taskId)
    })
  }
  return (
    <form ref={form} className="inline-form" onSubmit={(event) => void submit(event)} noValidate aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Queue a task</h2>
      <div className="field wide">
        <label htmlFor={`${id}-goal`}>Goal</label>
        <textarea
          ref={goal}
          id={`${id}-goal`}
          name="goal"
          rows={2}
          aria-invalid={failure === undefined ? undefined : true}
          aria-describedby={failure === undefined ? undefined : `${id}-error`}
        />
      </div>
      <div className="field">
        <label htmlFor={`${id}-host`}>Host</label>
        <select id={`${id}-host`} name="hostId" defaultValue="">
          <option value="">Any host</option>
          {hosts.map((host) => <option key={host.hostId} value={host.hostId}>{host.name} ({host.hostId})</option>)}
        </select>
      </div>
      {failure === undefined ? null : <p id={`${id}-error`} className="form-error" role="alert">{failure.message}</p>}
      <button type="submit" disabled={busy}>{busy ? "Queueing…" : "Queue task"}</button>
    </form>
  )
}

export default function TasksPage(_props: PageProps) {
  const api = useAdminApi()
  const { search } = useLocation()
  const status = isStatus(search.get("status")) ? (search.get("status") as TaskStatus) : undefined
  const hostId = search.get("hostId") ?? undefined
  const id = useId()
  const hosts = useLiveResult(api, (client) => client.admin.listHosts(), [])
  const [live, setLive] = useState(true)
  const tasks = useLiveResult(
    api,
    (client) =>
      client.admin.listTasks({
        query: { ...(status === undefined ? {} : { status }), ...(hostId === undefined ? {} : { hostId }) }
      }),
    [status, hostId],
    live ? 5_000 : undefined
  )
  const [created, setCreated] = useState<string | undefined>(undefined)
  const list = tasks.value?.tasks
  const anyRunning = list?.some((task) => !isTerminal(task.status)) ?? true
  if (live !== anyRunning) setLive(anyRunning)
  const hostName = new Map((hosts.value?.hosts ?? []).map((host) => [host.hostId, host.name]))
  const activeHosts = (hosts.value?.hosts ?? []).filter((host) => host.revokedAt === null)

  const filter = (next: { readonly status?: string; readonly hostId?: string }) => {
    const params = new URLSearchParams()
    const s = "status" in next ? next.status : status
    const h = "hostId" in next ? next.hostId : hostId
    if (s !== undefined && s !== "") params.set("status", s)
    if (h !== undefined && h !== "") params.set("hostId", h)
    const query = params.toString()
    navigate(`/operator/tasks${query === "" ? "" : `?${query}`}`, { replace: true })
  }

  return (
    <OperatorPage title="Tasks" intro="Queued for the hosts; a task's page follows its planner decisions as they happen.">
      <CreateTask
        hosts={activeHosts}
        onCreated={(taskId) => {
          setCreated(taskId)
          tasks.reload()
        }}
      />
      {created === undefined ? null : (
        <p className="status" role="status">
          Task queued: <Link to={`/operator/tasks/${encodeURIComponent(created)}`}>{created}</Link>
        </p>
      )}

      <form className="filters" role="search" aria-labelledby={`${id}-filters`} onSubmit={(event) => event.preventDefault()}>
        <h2 id={`${id}-filters`}>Filter</h2>
        <div className="field">
          <label htmlFor={`${id}-status`}>Status</label>
          <select id={`${id}-status`} value={status ?? ""} onChange={(event) => filter({ status: event.target.value })}>
            <option value="">Any status</option>
            {STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${id}-filter-host`}>Host</label>
          <select id={`${id}-filter-host`} value={hostId ?? ""} onChange={(event) => filter({ hostId: event.target.value })}>
            <option value="">Any host</option>
            {hostId !== undefined && !hostName.has(hostId) ? <option value={hostId}>{hostId}</option> : null}
            {(hosts.value?.hosts ?? []).map((host) => <option key={host.hostId} value={host.hostId}>{host.name}</option>)}
          </select>
        </div>
      </form>

      <Pending result={tasks} what="tasks" />
      {list === undefined ? null : list.length === 0
        ? <p className="status">No tasks{status === undefined && hostId === undefined ? " yet" : " match these filters"}.</p>
        : (
          <TableRegion label={`${list.length} task${list.length === 1 ? "" : "s"}, newest first`}>
            <thead>
              <tr>
                <th scope="col">Goal</th>
                <th scope="col">Status</th>
                <th scope="col">Attempt</th>
                <th scope="col">Host</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {list.map((task: TaskView) => (
                <tr key={task.taskId}>
                  <th scope="row" className="goal">
                    <Link to={`/operator/tasks/${encodeURIComponent(task.taskId)}`}>{task.goal}</Link>
                  </th>
                  <td><StatusBadge status={task.status} /></td>
                  <td>{task.attempt}</td>
                  <td>{task.hostId === null ? <span className="muted">any</span> : hostName.get(task.hostId) ?? <code>{task.hostId}</code>}</td>
                  <td><Time iso={task.createdAt} /></td>
                </tr>
              ))}
            </tbody>
          </TableRegion>
        )}
      {tasks.value !== undefined ? <FailureText failure={tasks.failure} prefix="Could not refresh the tasks" /> : null}
    </OperatorPage>
  )
}
