/** The operator's tasks (`/operator/tasks`), loaded on demand (its own chunk). To come: a placeholder for now. */
import { Placeholder } from "../app/Placeholder.tsx"
import type { PageProps } from "../app/Routes.tsx"

export default function TasksPage(_props: PageProps) {
  return <Placeholder realm="admin" title="Tasks" />
}
