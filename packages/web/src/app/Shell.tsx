/**
 * The console's frame: a skip link, the header with its navigation and who
 * is signed in (`Account.tsx`), and the page of the current path — or, when the server asked for a token
 * (`Session.ts`), the sign-in form in its place. Focus moves to the page's
 * main region on each navigation, so a keyboard or screen-reader user lands
 * on the new page rather than on the link they left.
 */
import { Suspense, useEffect, useRef } from "react"
import { useStore } from "zustand"
import { REALMS, sessionStore } from "../api/Session.ts"
import { Link, matchPath, navigate, useLocation } from "./Router.tsx"
import type { Params } from "./Router.tsx"
import { NAV, REDIRECTS, ROUTES } from "./Routes.tsx"
import type { NavItem, RouteDef } from "./Routes.tsx"
import { Account } from "./Account.tsx"
import { SignIn } from "./SignIn.tsx"

const find = (pathname: string): { readonly route: RouteDef; readonly params: Params } | undefined => {
  for (const route of ROUTES) {
    const params = matchPath(route.path, pathname)
    if (params !== undefined) return { route, params }
  }
  return undefined
}

/** The chat is current on `/` and any `/chats/…`; another item on its own path and below it. */
const isCurrent = (item: NavItem, pathname: string) =>
  item.to === "/" ? pathname === "/" || pathname.startsWith("/chats/") : pathname === item.to || pathname.startsWith(`${item.to}/`)

const NavLink = ({ item, pathname }: { readonly item: NavItem; readonly pathname: string }) => (
  <Link to={item.to} className="nav-link" aria-current={isCurrent(item, pathname) ? "page" : undefined}>
    {item.label}
  </Link>
)

const NotFound = () => (
  <section className="page" aria-labelledby="page-title">
    <h1 id="page-title" tabIndex={-1}>Not found</h1>
    <p>
      No page here. <Link to="/">Go to the chat</Link>.
    </p>
  </section>
)

export const Shell = () => {
  const { pathname } = useLocation()
  const asking = useStore(sessionStore, (state) => state.asking)
  const main = useRef<HTMLElement>(null)
  const redirect = REDIRECTS[pathname.replace(/\/+$/, "") || "/"]
  const found = find(pathname)

  useEffect(() => {
    if (redirect !== undefined) navigate(redirect, { replace: true })
  }, [redirect])

  useEffect(() => {
    document.title = `${found?.route.title ?? "Not found"} · Switchboard`
  }, [pathname, found?.route.title])

  // A new page takes the focus (where a screen reader starts reading); the same page at a new
  // address keeps it — the chat moving from `/` to its own address as its first message is sent
  // must leave the focus in the composer.
  const page = found?.route.page
  const shown = useRef(page)
  useEffect(() => {
    const before = shown.current
    shown.current = page
    if (before !== page) main.current?.focus()
  }, [page])

  // The current page's realm first; another realm the server refused is asked for too.
  const signInRealm = found !== undefined && asking[found.route.realm] ? found.route.realm : REALMS.find((realm) => asking[realm])
  const Page = found?.route.page

  return (
    <>
      <a className="skip-link" href="#main">Skip to content</a>
      <header className="site-header">
        <Link to="/" className="brand">Switchboard</Link>
        <nav aria-label="Main">
          <ul className="nav">
            <li><NavLink item={NAV.chat} pathname={pathname} /></li>
            <li className="nav-section">
              <span className="nav-heading" id="nav-operator">Operator</span>
              <ul className="nav" aria-labelledby="nav-operator">
                {NAV.operator.map((item) => <li key={item.to}><NavLink item={item} pathname={pathname} /></li>)}
              </ul>
            </li>
          </ul>
        </nav>
        <Account realm={found?.route.realm ?? "chat"} />
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        {signInRealm !== undefined
          ? <SignIn key={signInRealm} realm={signInRealm} />
          : Page === undefined || found === undefined
          ? (redirect === undefined ? <NotFound /> : null)
          : (
            <Suspense fallback={<p className="status" role="status">Loading…</p>}>
              <Page params={found.params} />
            </Suspense>
          )}
      </main>
    </>
  )
}
