/**
 * The operator's hosts (`/operator/hosts`): every registered host with its
 * last heartbeat and whether it is online (a heartbeat within the last
 * minute: `switchboard host run` sends one every 15 s), a form that registers
 * a host and shows its token once, with a copy button — the server keeps only
 * a hash, and the console forgets it when the operator dismisses it or leaves
 * the page — revoking a host, after a confirmation, and its budget of planner
 * tokens (`BudgetDialog.tsx`).
 */
import type { HostView } from "@switchboard/domain"
import type { FormEvent } from "react"
import { useId, useRef, useState } from "react"
import { useAdminApi } from "../api/ConsoleApi.ts"
import { Link } from "../app/Router.tsx"
import type { PageProps } from "../app/Router.tsx"
import { BudgetDialog } from "./BudgetDialog.tsx"
import { ago, ConfirmDialog, FailureText, OperatorPage, Pending, TableRegion, Time, useAction, useLiveResult } from "./Common.tsx"

/** A host is online when its last heartbeat is at most this old. */
export const ONLINE_WITHIN_MS = 60_000

type HostState = "online" | "offline" | "revoked" | "never"

export const hostState = (host: HostView, now: number = Date.now()): HostState => {
  if (host.revokedAt !== null) return "revoked"
  if (host.lastHeartbeatAt === null) return "never"
  return now - new Date(host.lastHeartbeatAt).getTime() <= ONLINE_WITHIN_MS ? "online" : "offline"
}

const STATE_LABELS: Record<HostState, string> = {
  online: "Online",
  offline: "Offline",
  revoked: "Revoked",
  never: "Offline (never seen)"
}

const CopyButton = ({ text, label }: { readonly text: string; readonly label: string }) => {
  const [copied, setCopied] = useState<"copied" | "failed" | undefined>(undefined)
  return (
    <>
      <button
        type="button"
        className="secondary"
        onClick={() =>
          void navigator.clipboard.writeText(text).then(() => setCopied("copied"), () => setCopied("failed"))}
      >
        {label}
      </button>
      <span className="status" role="status">
        {copied === "copied" ? "Copied." : copied === "failed" ? "The browser refused the clipboard: select the token and copy it." : ""}
      </span>
    </>
  )
}

/** The new host's token: shown here, this once. */
const NewToken = ({ hostId, token, rotated, onDismiss }: {
  readonly hostId: string
  readonly token: string
  /** A new token for a registered host (its old one is refused from now on), not a new host's. */
  readonly rotated: boolean
  readonly onDismiss: () => void
}) => {
  const id = useId()
  return (
    <div className="callout" role="region" aria-labelledby={id}>
      <h2 id={id}>{rotated ? `Host ${hostId}: new token` : `Host ${hostId} registered`}</h2>
      <p>
        Its token is shown <strong>this once</strong>: the server keeps only a hash. Give it to the host agent
        (<code>SWITCHBOARD_HOST_TOKEN</code>) now.
      </p>
      <p className="secret">
        <code data-testid="host-token">{token}</code>
      </p>
      <div className="actions">
        <CopyButton text={token} label="Copy token" />
        <button type="button" onClick={onDismiss}>I have saved it</button>
      </div>
    </div>
  )
}

const CreateHost = ({ onCreated }: { readonly onCreated: (created: { hostId: string; token: string }) => void }) => {
  const api = useAdminApi()
  const id = useId()
  const input = useRef<HTMLInputElement>(null)
  const { act, busy, failure, setFailure } = useAction()
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const name = input.current?.value.trim() ?? ""
    if (name === "") {
      setFailure({ message: "Enter the host's name." })
      input.current?.focus()
      return
    }
    await act(async () => {
      const created = await api.run(api.client.admin.createHost({ payload: { name } }))
      if (input.current !== null) input.current.value = ""
      onCreated(created)
    })
  }
  return (
    <form className="inline-form" onSubmit={(event) => void submit(event)} noValidate aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Register a host</h2>
      <div className="field">
        <label htmlFor={`${id}-name`}>Name</label>
        <input
          ref={input}
          id={`${id}-name`}
          name="name"
          maxLength={200}
          autoComplete="off"
          aria-invalid={failure === undefined ? undefined : true}
          aria-describedby={failure === undefined ? undefined : `${id}-error`}
        />
      </div>
      {failure === undefined ? null : <p id={`${id}-error`} className="form-error" role="alert">{failure.message}</p>}
      <button type="submit" disabled={busy}>{busy ? "Registering…" : "Register host"}</button>
    </form>
  )
}

export default function HostsPage(_props: PageProps) {
  const api = useAdminApi()
  // Every 15 s: online and offline follow the heartbeats without a reload.
  const hosts = useLiveResult(api, (client) => client.admin.listHosts(), [], 15_000)
  const [created, setCreated] = useState<{ hostId: string; token: string; rotated?: boolean } | undefined>(undefined)
  const [revoking, setRevoking] = useState<HostView | undefined>(undefined)
  const [rotating, setRotating] = useState<HostView | undefined>(undefined)
  const [budgeting, setBudgeting] = useState<HostView | undefined>(undefined)
  const now = Date.now()
  const list = hosts.value?.hosts

  return (
    <OperatorPage title="Hosts" intro="The machines that run tasks. A host is online when it sent a heartbeat within the last minute.">
      {created === undefined
        ? <CreateHost onCreated={(host) => {
          setCreated(host)
          hosts.reload()
        }} />
        : <NewToken hostId={created.hostId} token={created.token} rotated={created.rotated === true} onDismiss={() => setCreated(undefined)} />}

      <Pending result={hosts} what="hosts" />
      {list === undefined ? null : list.length === 0
        ? <p className="status">No hosts yet: register one above.</p>
        : (
          <TableRegion label={`${list.length} host${list.length === 1 ? "" : "s"}`}>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">Last heartbeat</th>
                <th scope="col">Host id</th>
                <th scope="col">Created</th>
                <th scope="col"><span className="visually-hidden">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {list.map((host) => {
                const state = hostState(host, now)
                return (
                  <tr key={host.hostId}>
                    <th scope="row">{host.name}</th>
                    <td><span className={`badge badge-${state}`}>{STATE_LABELS[state]}</span></td>
                    <td>
                      {host.lastHeartbeatAt === null
                        ? <span className="muted">never</span>
                        : <><Time iso={host.lastHeartbeatAt} /> <span className="muted">({ago(host.lastHeartbeatAt, now)})</span></>}
                    </td>
                    <td><code>{host.hostId}</code></td>
                    <td><Time iso={host.createdAt} /></td>
                    <td className="row-actions">
                      <Link to={`/operator/tasks?hostId=${encodeURIComponent(host.hostId)}`}>
                        Tasks<span className="visually-hidden"> of {host.name}</span>
                      </Link>
                      {host.revokedAt === null
                        ? (
                          <>
                            <button type="button" className="small" onClick={() => setBudgeting(host)}>
                              Budget<span className="visually-hidden"> of {host.name}</span>
                            </button>
                            <button type="button" className="small" onClick={() => setRotating(host)}>
                              New token<span className="visually-hidden"> for {host.name}</span>
                            </button>
                            <button type="button" className="danger small" onClick={() => setRevoking(host)}>
                              Revoke<span className="visually-hidden"> {host.name}</span>
                            </button>
                          </>
                        )
                        : <span className="muted">revoked <Time iso={host.revokedAt} /></span>}
                    </td>
                  </tr>
                )
              })}
            </tbody>
          </TableRegion>
        )}
      {hosts.value !== undefined ? <FailureText failure={hosts.failure} prefix="Could not refresh the hosts" /> : null}

      <BudgetDialog host={budgeting} onClose={() => setBudgeting(undefined)} />

      <ConfirmDialog
        open={rotating !== undefined}
        title={`A new token for ${rotating?.name ?? "the host"}?`}
        confirmLabel="Issue a new token"
        onClose={() => setRotating(undefined)}
        onConfirm={async () => {
          if (rotating === undefined) return
          const rotated = await api.run(api.client.admin.rotateHostToken({ params: { hostId: rotating.hostId } }))
          setCreated({ hostId: rotated.hostId, token: rotated.token, rotated: true })
        }}
      >
        <p>
          Its current token is refused from its next request on, by every replica; the new one is shown once. Its
          tasks are untouched: restart its agent with the new token before its lease runs out.
        </p>
      </ConfirmDialog>

      <ConfirmDialog
        open={revoking !== undefined}
        title={`Revoke ${revoking?.name ?? "the host"}?`}
        confirmLabel="Revoke host"
        onClose={() => setRevoking(undefined)}
        onConfirm={async () => {
          if (revoking === undefined) return
          await api.run(api.client.admin.revokeHost({ params: { hostId: revoking.hostId } }))
          hosts.reload()
        }}
      >
        <p>
          Its token is refused from its next request on. Its running task goes back to the queue for any host. The
          host stays listed, with its history. This cannot be undone: a revoked host needs registering again.
        </p>
      </ConfirmDialog>
    </OperatorPage>
  )
}
