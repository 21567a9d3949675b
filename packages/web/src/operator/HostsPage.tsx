/** The operator's hosts (`/operator/hosts`), loaded on demand (its own chunk). To come: a placeholder for now. */
import { Placeholder } from "../app/Placeholder.tsx"
import type { PageProps } from "../app/Routes.tsx"

export default function HostsPage(_props: PageProps) {
  return <Placeholder realm="admin" title="Hosts" />
}
