/**
 * A host's budget of planner tokens per 24 hours, in a modal dialog opened
 * from the hosts' table (docs/usage.md): what applies (its own, else the
 * server's default), what it used over the window, a field for its own
 * budget and a button back to the default. A host at its budget gets 429
 * `budget_exceeded` from the planner proxy, on every replica.
 */
import type { HostBudget, HostView } from "@switchboard/domain"
import type { FormEvent } from "react"
import { useEffect, useId, useRef, useState } from "react"
import { useAdminApi } from "../api/ConsoleApi.ts"
import { failureOf, FailureText, useAction } from "./Common.tsx"

const tokens = (n: number | null) => n === null ? "none" : `${n.toLocaleString()} tokens`

export const BudgetDialog = ({ host, onClose }: { readonly host: HostView | undefined; readonly onClose: () => void }) => {
  const api = useAdminApi()
  const ref = useRef<HTMLDialogElement>(null)
  const input = useRef<HTMLInputElement>(null)
  const id = useId()
  const [budget, setBudget] = useState<HostBudget | undefined>(undefined)
  const { act, busy, failure, setFailure } = useAction()

  useEffect(() => {
    const dialog = ref.current
    if (dialog === null) return
    if (host === undefined) {
      if (dialog.open) dialog.close()
      return
    }
    setBudget(undefined)
    setFailure(undefined)
    if (!dialog.open) dialog.showModal()
    const controller = new AbortController()
    api.run(api.client.admin.hostBudget({ params: { hostId: host.hostId } }), { signal: controller.signal }).then(
      (loaded) => {
        if (controller.signal.aborted) return
        setBudget(loaded)
        if (input.current !== null) input.current.value = loaded.dailyTokens === null ? "" : String(loaded.dailyTokens)
      },
      (error: unknown) => {
        if (!controller.signal.aborted) setFailure(failureOf(error))
      }
    )
    return () => controller.abort()
  }, [host, api])

  const save = (dailyTokens: number | null) =>
    act(async () => {
      if (host === undefined) return
      setBudget(await api.run(api.client.admin.setHostBudget({ params: { hostId: host.hostId }, payload: { dailyTokens } })))
      if (input.current !== null) input.current.value = dailyTokens === null ? "" : String(dailyTokens)
    })

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const raw = input.current?.value.trim() ?? ""
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
      setFailure({ message: "Enter a whole number of tokens, 0 or more (or use the default)." })
      input.current?.focus()
      return
    }
    void save(Number(raw))
  }

  return (
    <dialog
      ref={ref}
      className="confirm"
      aria-labelledby={`${id}-title`}
      onClose={() => {
        if (host !== undefined) onClose()
      }}
    >
      <h2 id={`${id}-title`}>Budget of {host?.name ?? "the host"}</h2>
      {budget === undefined
        ? (failure === undefined ? <p className="status" role="status">Loading the budget…</p> : null)
        : (
          <dl className="facts" data-testid="budget-facts">
            <dt>Applies</dt>
            <dd>
              {tokens(budget.effectiveDailyTokens)} a day
              {budget.dailyTokens === null && budget.effectiveDailyTokens !== null ? " (the server's default)" : ""}
            </dd>
            <dt>Used</dt>
            <dd>{budget.usedTokens.toLocaleString()} tokens over the last 24 hours</dd>
            <dt>Server's default</dt>
            <dd>{tokens(budget.defaultDailyTokens)}</dd>
          </dl>
        )}
      <form className="budget-form" onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor={`${id}-tokens`}>Its own budget, tokens per 24 hours</label>
          <input
            ref={input}
            id={`${id}-tokens`}
            name="dailyTokens"
            inputMode="numeric"
            autoComplete="off"
            aria-invalid={failure === undefined ? undefined : true}
            aria-describedby={`${id}-help`}
          />
          <p id={`${id}-help`} className="muted">
            Input and output tokens of its planner decisions. At its budget, its next decision is refused (429
            budget_exceeded) until older hours leave the window. Without one of its own, the server's default applies
            (<code>PLANNER_HOST_DAILY_TOKENS</code>).
          </p>
        </div>
        <FailureText failure={failure} />
        <div className="actions">
          <button type="button" className="secondary" onClick={onClose}>Close</button>
          <button type="button" className="secondary" disabled={busy || budget === undefined} onClick={() => void save(null)}>
            Use the default
          </button>
          <button type="submit" disabled={busy || budget === undefined}>{busy ? "Saving…" : "Save budget"}</button>
        </div>
      </form>
    </dialog>
  )
}
