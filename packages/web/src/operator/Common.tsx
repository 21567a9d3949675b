/**
 * What the operator's pages share: a result that stays on screen while it is
 * fetched again (and, when asked, is fetched again every few seconds), a
 * failure as a sentence, a confirmation dialog (native `<dialog>`: modal, so
 * focus stays inside, and Escape closes it), a table that scrolls sideways in
 * a labelled region on a narrow screen, and times as people read them.
 *
 * Every call goes through the client package's typed `ApiClient`
 * (`useAdminApi()`); a 401 asks for the admin token (`ConsoleApi.run`).
 */
import { describeApiFailure } from "@switchboard/client"
import type { ApiClient, ApiFailure } from "@switchboard/client"
import { Effect } from "effect"
import type { DependencyList, ReactNode } from "react"
import { useCallback, useEffect, useId, useRef, useState } from "react"
import type { ConsoleApi } from "../api/ConsoleApi.ts"
import "../styles/operator.css"
import "../styles/operator-tables.css"
import "../styles/operator-tasks.css"
import "../styles/operator-kinds.css"
import "../styles/operator-dialogs.css"

/** A failure (the typed client's error, or anything thrown) as a sentence with the server's code. */
export const failureOf = (error: unknown): ApiFailure => Effect.runSync(describeApiFailure(error))

export interface LiveResult<A> {
  /** The last value fetched (kept while it is fetched again), `undefined` before the first answer. */
  readonly value: A | undefined
  /** The last fetch's failure, `undefined` once one succeeds. */
  readonly failure: ApiFailure | undefined
  /** Fetches again now (after a change the page made). */
  readonly reload: () => void
}

/**
 * A call's result, fetched when the page opens, when `api` (its token) or `deps` change, on
 * `reload()`, and every `everyMs` while that is defined (a task that runs: `undefined` once it
 * ended stops the polling). Unlike `useApiResult`, a fetch again keeps the last value on screen:
 * the page does not flash "Loading…" on every refresh. Everything stops when the page closes.
 */
export const useLiveResult = <A, E>(
  api: ConsoleApi,
  call: (client: ApiClient["Service"]) => Effect.Effect<A, E, ApiClient>,
  deps: DependencyList,
  everyMs?: number
): LiveResult<A> => {
  const [state, setState] = useState<{ readonly value: A | undefined; readonly failure: ApiFailure | undefined }>({
    value: undefined,
    failure: undefined
  })
  const [round, setRound] = useState(0)
  const reload = useCallback(() => setRound((n) => n + 1), [])
  // A change of deps is another resource: forget the old value.
  const first = useRef(true)
  useEffect(() => {
    if (first.current) first.current = false
    else setState({ value: undefined, failure: undefined })
  }, [api, ...deps])
  useEffect(() => {
    const controller = new AbortController()
    api.run(call(api.client), { signal: controller.signal }).then(
      (value) => {
        if (!controller.signal.aborted) setState({ value, failure: undefined })
      },
      (error: unknown) => {
        if (!controller.signal.aborted) setState((before) => ({ value: before.value, failure: failureOf(error) }))
      }
    )
    return () => controller.abort()
    // `call` is the caller's closure: `deps` say when it changes.
  }, [api, round, ...deps])
  useEffect(() => {
    if (everyMs === undefined) return
    const timer = setInterval(reload, everyMs)
    return () => clearInterval(timer)
  }, [everyMs, reload])
  return { ...state, reload }
}

/** The page's frame: its title (the heading the shell focuses) and its sections. */
export const OperatorPage = ({ title, intro, children }: {
  readonly title: string
  readonly intro?: ReactNode
  readonly children: ReactNode
}) => (
  <section className="page operator" aria-labelledby="page-title">
    <h1 id="page-title" tabIndex={-1}>{title}</h1>
    {intro === undefined ? null : <p className="intro">{intro}</p>}
    {children}
  </section>
)

/** A failure, said (an alert: it appears after something the user did, or a refresh that failed). */
export const FailureText = ({ failure, prefix }: { readonly failure: ApiFailure | undefined; readonly prefix?: string }) =>
  failure === undefined ? null : <p className="form-error" role="alert">{prefix === undefined ? "" : `${prefix}: `}{failure.message}</p>

/** "Loading…" until the first answer, or the first answer's failure. */
export const Pending = ({ result, what }: { readonly result: LiveResult<unknown>; readonly what: string }) =>
  result.value !== undefined ? null : result.failure !== undefined
  ? <FailureText failure={result.failure} prefix={`Could not load the ${what}`} />
  : <p className="status" role="status">Loading the {what}…</p>

/**
 * A table in a region the keyboard can scroll sideways (`tabIndex=0`), named by `label`: on a
 * phone, the columns that do not fit are a scroll away rather than squeezed.
 */
export const TableRegion = ({ label, children }: { readonly label: string; readonly children: ReactNode }) => {
  const id = useId()
  return (
    <div className="table-region" role="region" aria-labelledby={id} tabIndex={0}>
      <table className="data-table">
        <caption id={id}>{label}</caption>
        {children}
      </table>
    </div>
  )
}

/** A time as the reader's locale shows it, with the ISO value in `dateTime` (and a tooltip). */
export const Time = ({ iso, fallback = "—" }: { readonly iso: string | null | undefined; readonly fallback?: string }) => {
  if (iso === null || iso === undefined) return <span className="muted">{fallback}</span>
  const date = new Date(iso)
  return <time dateTime={iso} title={iso}>{Number.isNaN(date.getTime()) ? iso : date.toLocaleString()}</time>
}

/** How long ago, roughly ("12 s ago", "3 min ago"). */
export const ago = (iso: string, now: number = Date.now()): string => {
  const seconds = Math.max(0, Math.round((now - new Date(iso).getTime()) / 1000))
  if (seconds < 60) return `${seconds} s ago`
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`
  return `${Math.floor(seconds / 86_400)} d ago`
}

export interface ConfirmProps {
  /** Shown while true (as a modal dialog), closed when false. */
  readonly open: boolean
  readonly title: string
  readonly children: ReactNode
  /** The confirming button's label ("Revoke host"). */
  readonly confirmLabel: string
  /** The action: the dialog stays open, its button busy, until it settles; a failure is shown in it. */
  readonly onConfirm: () => Promise<void>
  /** Closed without acting (Cancel, Escape) or after the action succeeded. */
  readonly onClose: () => void
  readonly danger?: boolean
  /** The dismissing button's label (default "Cancel"). */
  readonly dismissLabel?: string
}

/**
 * A confirmation as a native modal `<dialog>`: the rest of the page is inert while it is open (focus
 * stays in it), Escape closes it, and the browser gives focus back to what opened it. The action's
 * failure is said inside, and the dialog stays open for another try or Cancel.
 */
/**
 * A form's or a dialog's action: `busy` while it runs, its failure (or one the caller sets, e.g. a
 * field left empty) to say beside it. `act` clears the failure, runs the action, keeps what it threw.
 */
export const useAction = () => {
  const [busy, setBusy] = useState(false)
  const [failure, setFailure] = useState<ApiFailure | undefined>(undefined)
  const act = async (action: () => Promise<void>) => {
    setBusy(true)
    setFailure(undefined)
    try {
      await action()
    } catch (error) {
      setFailure(failureOf(error))
    } finally {
      setBusy(false)
    }
  }
  return { busy, failure, setFailure, act }
}

export const ConfirmDialog = ({ children, confirmLabel, danger = true, dismissLabel = "Cancel", onClose, onConfirm, open, title }: ConfirmProps) => {
  const ref = useRef<HTMLDialogElement>(null)
  const id = useId()
  const { act, busy, failure, setFailure } = useAction()
  useEffect(() => {
    const dialog = ref.current
    if (dialog === null) return
    if (open && !dialog.open) {
      setFailure(undefined)
      dialog.showModal()
    } else if (!open && dialog.open) dialog.close()
  }, [open])
  const confirm = () =>
    act(async () => {
      await onConfirm()
      onClose()
    })
  return (
    <dialog
      ref={ref}
      className="confirm"
      aria-labelledby={`${id}-title`}
      aria-describedby={`${id}-body`}
      // Escape (the browser's `cancel`) and any other close: tell the owner.
      onClose={() => {
        if (open) onClose()
      }}
    >
      <h2 id={`${id}-title`}>{title}</h2>
      <div id={`${id}-body`}>{children}</div>
      <FailureText failure={failure} />
      <div className="actions">
        <button type="button" className="secondary" onClick={onClose} autoFocus>{dismissLabel}</button>
        <button type="button" className={danger ? "danger" : undefined} disabled={busy} onClick={() => void confirm()}>
          {busy ? "Working…" : confirmLabel}
        </button>
      </div>
    </dialog>
  )
}

/** JSON for reading: two-space indents. */
export const pretty = (value: unknown): string => JSON.stringify(value, null, 2)
