/**
 * A task's planner decisions as its page shows them: the first page when the page opens, the next
 * ones when the operator asks (`showMore`), and, while the task may still decide, only the decisions
 * after the last one shown every few seconds (`after`, the documented `<attempt>:<stepIndex>`
 * cursor) — never the whole log again on every refresh. A log longer than what is shown is not
 * followed until the operator has caught up with it: what is new then comes with the next page.
 */
import type { DecisionRecord } from "@switchboard/domain"
import { useCallback, useEffect, useRef, useState } from "react"
import type { ConsoleApi } from "../api/ConsoleApi.ts"
import type { ApiFailure } from "@switchboard/client"
import { failureOf } from "./Common.tsx"

export interface DecisionLog {
  /** In order of attempt and step; `undefined` before the first page came. */
  readonly decisions: ReadonlyArray<DecisionRecord> | undefined
  /** More decisions than those shown are stored: `showMore` brings the next page. */
  readonly more: boolean
  /** A page is on its way. */
  readonly loading: boolean
  /** The last fetch's failure, `undefined` once one succeeds. */
  readonly failure: ApiFailure | undefined
  readonly showMore: () => void
}

const keyOf = (d: DecisionRecord) => `${d.attempt}:${d.stepIndex}`

export const useDecisionLog = (api: ConsoleApi, taskId: string, following: boolean, everyMs: number): DecisionLog => {
  const [state, setState] = useState<Omit<DecisionLog, "showMore">>({ decisions: undefined, more: false, loading: true, failure: undefined })
  // What the fetches read without waiting for a render: the log so far, whether a fetch is on its way,
  // and whether another was asked for meanwhile (the task's end, while a refresh was out: its last
  // decisions may have come after that refresh was answered).
  const shown = useRef<{ decisions: ReadonlyArray<DecisionRecord> | undefined; more: boolean; busy: boolean; again: boolean }>({
    decisions: undefined,
    more: false,
    busy: false,
    again: false
  })
  const controller = useRef<AbortController | undefined>(undefined)

  /**
   * The page after the last decision shown (the first page when none is), added to the log. Only a
   * page the operator asked for shows as loading; a refresh that brings nothing new changes no state,
   * so a long log is not drawn again every 2 s.
   */
  const fetchNext = useCallback((asked: boolean) => {
    const now = shown.current
    if (controller.current === undefined) return
    if (now.busy) {
      now.again = true
      return
    }
    const signal = controller.current.signal
    const last = now.decisions?.at(-1)
    now.busy = true
    if (asked) setState((s) => ({ ...s, loading: true }))
    api.run(api.client.admin.listDecisions({ query: { taskId, ...(last === undefined ? {} : { after: keyOf(last) }) } }), { signal }).then(
      (page) => {
        if (signal.aborted) return
        const before = shown.current.decisions
        const known = new Set((before ?? []).map(keyOf))
        const fresh = page.decisions.filter((d) => !known.has(keyOf(d)))
        const decisions = before !== undefined && fresh.length === 0 ? before : [...(before ?? []), ...fresh]
        const more = page.nextAfter !== undefined
        const again = shown.current.again
        shown.current = { decisions, more, busy: false, again: false }
        setState((s) =>
          s.decisions === decisions && s.more === more && !s.loading && s.failure === undefined
            ? s
            : { decisions, more, loading: false, failure: undefined }
        )
        if (again) fetchNext(false)
      },
      (error: unknown) => {
        if (signal.aborted) return
        shown.current.busy = false
        shown.current.again = false
        setState((s) => ({ ...s, loading: false, failure: failureOf(error) }))
      }
    )
  }, [api, taskId])

  // A task (or a token) of its own: its log from the start.
  useEffect(() => {
    controller.current = new AbortController()
    shown.current = { decisions: undefined, more: false, busy: false, again: false }
    setState({ decisions: undefined, more: false, loading: true, failure: undefined })
    fetchNext(false)
    return () => {
      controller.current?.abort()
      controller.current = undefined
    }
  }, [fetchNext])

  // Following: the decisions after the last one, every `everyMs`, once the operator has caught up;
  // and once more when the task stops deciding (its last decisions came after the last refresh).
  useEffect(() => {
    const follow = () => {
      if (!shown.current.more && shown.current.decisions !== undefined) fetchNext(false)
    }
    if (!following) {
      follow()
      return
    }
    const timer = setInterval(follow, everyMs)
    return () => clearInterval(timer)
  }, [following, everyMs, fetchNext])

  const showMore = useCallback(() => fetchNext(true), [fetchNext])
  return { ...state, showMore }
}
