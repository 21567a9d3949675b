/**
 * A page still to come: its title, and the connection to the server in its
 * realm (the realm's probe), so the sign-in already works on every route.
 * The chat and operator pages replace it.
 */
import { useAdminApi, useApi, useApiResult } from "../api/ConsoleApi.ts"
import { probes } from "../api/Probes.ts"
import type { Realm } from "../api/Session.ts"

export const Placeholder = ({ realm, title }: { readonly realm: Realm; readonly title: string }) => {
  const chat = useApi()
  const admin = useAdminApi()
  const api = realm === "chat" ? chat : admin
  const result = useApiResult(api, probes[realm], [realm])
  return (
    <section className="page" aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>{title}</h1>
      <p>This page is coming.</p>
      <p className="status" role="status">
        {result.status === "loading"
          ? "Connecting…"
          : result.status === "success"
          ? `Connected: ${result.value}.`
          : `Not connected: ${result.failure.message}`}
      </p>
    </section>
  )
}
