/**
 * The console's client-side router: the History API and a table of path
 * patterns (`Routes.tsx`), nothing more. `/chats/:chatId` style patterns, the
 * current location as React state (`useLocation`), `navigate()` and `<Link>`
 * (a real `<a href>`, so it opens in a new tab, is keyboard reachable and
 * works without the router; a plain click navigates in place).
 *
 * The server answers every console path with `index.html` (docs/console.md),
 * so a reload or a shared link lands on the same page.
 */
import type { AnchorHTMLAttributes, MouseEvent } from "react"
import { useSyncExternalStore } from "react"

const NAVIGATED = "switchboard:navigate"

const subscribe = (onChange: () => void) => {
  addEventListener("popstate", onChange)
  addEventListener(NAVIGATED, onChange)
  return () => {
    removeEventListener("popstate", onChange)
    removeEventListener(NAVIGATED, onChange)
  }
}

const currentPath = () => location.pathname + location.search + location.hash

export interface Location {
  readonly pathname: string
  readonly search: URLSearchParams
  readonly hash: string
}

/** The current location; re-renders on every navigation (links, `navigate`, back and forward). */
export const useLocation = (): Location => {
  const path = useSyncExternalStore(subscribe, currentPath)
  const url = new URL(path, "http://console.invalid")
  return { pathname: url.pathname, search: url.searchParams, hash: url.hash }
}

/** Goes to a path of the console (`/operator/tasks?status=running`), pushing it on the history unless `replace`. */
export const navigate = (to: string, options: { readonly replace?: boolean } = {}) => {
  if (to === currentPath()) return
  if (options.replace === true) history.replaceState(null, "", to)
  else history.pushState(null, "", to)
  dispatchEvent(new Event(NAVIGATED))
}

export type Params = Readonly<Record<string, string>>

/** What every page is given. */
export interface PageProps {
  /** The pattern's parameters (`:chatId` → `params.chatId`), decoded. */
  readonly params: Params
}

/** The parameters of `pathname` under `pattern` (`/chats/:chatId`), or `undefined` when it does not match. */
export const matchPath = (pattern: string, pathname: string): Params | undefined => {
  const want = pattern.split("/").filter((s) => s !== "")
  const have = pathname.split("/").filter((s) => s !== "")
  if (want.length !== have.length) return undefined
  const params: Record<string, string> = {}
  for (let i = 0; i < want.length; i++) {
    const segment = want[i]!
    let value: string
    try {
      value = decodeURIComponent(have[i]!)
    } catch {
      return undefined
    }
    if (segment.startsWith(":")) params[segment.slice(1)] = value
    else if (segment !== value) return undefined
  }
  return params
}

const isPlainClick = (event: MouseEvent<HTMLAnchorElement>) =>
  event.button === 0 && !event.metaKey && !event.ctrlKey && !event.shiftKey && !event.altKey && !event.defaultPrevented

export interface LinkProps extends Omit<AnchorHTMLAttributes<HTMLAnchorElement>, "href"> {
  readonly to: string
}

/** An `<a href>` that navigates in place on a plain click. */
export const Link = ({ onClick, to, ...props }: LinkProps) => (
  <a
    {...props}
    href={to}
    onClick={(event) => {
      onClick?.(event)
      if (!isPlainClick(event) || (props.target !== undefined && props.target !== "_self")) return
      event.preventDefault()
      navigate(to)
    }}
  />
)
