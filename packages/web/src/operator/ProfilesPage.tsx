/** The operator's provider profiles (`/operator/profiles`), loaded on demand (its own chunk). To come: a placeholder for now. */
import { Placeholder } from "../app/Placeholder.tsx"
import type { PageProps } from "../app/Routes.tsx"

export default function ProfilesPage(_props: PageProps) {
  return <Placeholder realm="admin" title="Profiles" />
}
